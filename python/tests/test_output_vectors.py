"""fixtures/output/ through klbr.envelope: the C16 ``output`` message and OutputSequence.

The vitest suite of @klbr/envelope runs the same files (packages/envelope/src/output.test.ts).
"""

import pytest

from conftest import load_vectors, same_value
from klbr.envelope import EnvelopeError, OutputSequence, make_envelope, parse_envelope

MESSAGES = load_vectors("output/messages.json")
SEQUENCES = load_vectors("output/sequences.json")


def _play(negotiated: bool, events: list) -> OutputSequence:
    sequence = OutputSequence(negotiated)
    for event in events:
        message = event.get("sent", event.get("received"))
        make_envelope("root", "g-1", message)  # every event is a valid message
        if "sent" in event:
            sequence.sent(message)
        else:
            sequence.received(message)
    return sequence


def test_the_files_hold_enough_cases():
    for cases in (MESSAGES, SEQUENCES):
        descriptions = [case["description"] for case in cases]
        assert len(set(descriptions)) == len(descriptions)
    assert sum(1 for case in MESSAGES if "error" in case) >= 20
    assert {case["error"]["code"] for case in SEQUENCES if "error" in case} == {
        "ENVELOPE_OUTPUT_AFTER_COMPLETED",
        "ENVELOPE_OUTPUT_NOT_NEGOTIATED",
        "ENVELOPE_OUTPUT_SEQUENCE",
        "ENVELOPE_OUTPUT_UNKNOWN_OPERATION",
    }


@pytest.mark.parametrize("case", MESSAGES, ids=[case["description"] for case in MESSAGES])
def test_message(case):
    if "error" in case:
        with pytest.raises(EnvelopeError) as caught:
            parse_envelope(case["input"])
        assert {"code": caught.value.code, "path": caught.value.path} == case["error"]
    else:
        output = parse_envelope(case["input"], "root", "g-1")
        expected = case["input"] if case["expected"] == "input" else case["expected"]
        assert same_value(output, expected)
        assert output is not case["input"]


@pytest.mark.parametrize("case", SEQUENCES, ids=[case["description"] for case in SEQUENCES])
def test_sequence(case):
    events = case["input"]["events"]
    negotiated = case["input"]["negotiated"]
    if "error" in case:
        sequence = _play(negotiated, events[:-1])
        last = events[-1]
        assert "received" in last
        with pytest.raises(EnvelopeError) as caught:
            sequence.received(last["received"])
        assert {"code": caught.value.code, "path": caught.value.path} == case["error"]
    else:
        sequence = _play(negotiated, events)
        next_seq = {key: sequence.next_seq(key) for key in case["expected"]["next_seq"]}
        assert next_seq == case["expected"]["next_seq"]
