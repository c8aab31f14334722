"""The shared vectors of an extension message (fixtures/output/ for C16, fixtures/display/ for C20).

messages.json: each envelope parsed, or refused with its code and path; sequences.json: the rules
across messages, played through the extension's sequence checker. Each test file names its
directory, its checker and what its vectors must cover; the vitest suite runs the same files
(packages/envelope/test/extension-vectors.ts).
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from conftest import same_value
from klbr.envelope import EnvelopeError, make_envelope, parse_envelope

__all__ = ["check_files", "check_message", "check_sequence"]


def _play(make: Callable[[bool], Any], negotiated: bool, events: list) -> Any:
    sequence = make(negotiated)
    for event in events:
        message = event.get("sent", event.get("received"))
        make_envelope("root", "g-1", message)  # every event is a valid message
        if "sent" in event:
            sequence.sent(message)
        else:
            sequence.received(message)
    return sequence


def check_files(messages: list, sequences: list, min_errors: int, codes: set[str]) -> None:
    """Unique descriptions, at least ``min_errors`` refused messages, and exactly ``codes`` pinned by the sequences."""
    for cases in (messages, sequences):
        descriptions = [case["description"] for case in cases]
        assert len(set(descriptions)) == len(descriptions)
    assert sum(1 for case in messages if "error" in case) >= min_errors
    assert {case["error"]["code"] for case in sequences if "error" in case} == codes


def check_message(case: dict) -> None:
    """One case of messages.json."""
    if "error" in case:
        with pytest.raises(EnvelopeError) as caught:
            parse_envelope(case["input"])
        assert {"code": caught.value.code, "path": caught.value.path} == case["error"]
    else:
        output = parse_envelope(case["input"], "root", "g-1")
        expected = case["input"] if case["expected"] == "input" else case["expected"]
        assert same_value(output, expected)
        assert output is not case["input"]


def check_sequence(case: dict, make: Callable[[bool], Any]) -> None:
    """One case of sequences.json, with a checker made by ``make(negotiated)``."""
    events = case["input"]["events"]
    negotiated = case["input"]["negotiated"]
    if "error" in case:
        sequence = _play(make, negotiated, events[:-1])
        last = events[-1]
        assert "received" in last
        with pytest.raises(EnvelopeError) as caught:
            sequence.received(last["received"])
        assert {"code": caught.value.code, "path": caught.value.path} == case["error"]
    else:
        sequence = _play(make, negotiated, events)
        next_seq = {key: sequence.next_seq(key) for key in case["expected"]["next_seq"]}
        assert next_seq == case["expected"]["next_seq"]
