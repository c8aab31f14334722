"""fixtures/display/ through klbr.envelope: the C20 ``display`` message and DisplaySequence.

The vitest suite of @klbr/envelope runs the same files (packages/envelope/src/display.test.ts).
"""

import pytest

from conftest import load_vectors, same_value
from klbr.envelope import EnvelopeError, DisplaySequence, make_envelope, parse_envelope

MESSAGES = load_vectors("display/messages.json")
SEQUENCES = load_vectors("display/sequences.json")


def _play(negotiated: bool, events: list) -> DisplaySequence:
    sequence = DisplaySequence(negotiated)
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
    assert sum(1 for case in MESSAGES if "error" in case) >= 40
    assert {case["error"]["code"] for case in SEQUENCES if "error" in case} == {
        "ENVELOPE_DISPLAY_AFTER_COMPLETED",
        "ENVELOPE_DISPLAY_DROPPED",
        "ENVELOPE_DISPLAY_NOT_NEGOTIATED",
        "ENVELOPE_DISPLAY_SEQUENCE",
        "ENVELOPE_DISPLAY_UNKNOWN_OPERATION",
        "ENVELOPE_MISSING_FIELD",
    }


def test_a_5_mib_png_is_checked_whole():
    import base64

    from klbr.envelope import is_encoded_image

    data = b"\x89PNG\r\n\x1a\n" + b"\x07" * (5 * 1024 * 1024)
    text = base64.b64encode(data).decode("ascii")
    assert is_encoded_image("image/png", text)
    assert not is_encoded_image("image/png", text[:3_000_000] + "*" + text[3_000_001:])
    assert not is_encoded_image("image/gif", text)


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
