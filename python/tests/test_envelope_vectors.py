"""fixtures/envelopes.json through klbr.envelope: the same cases the vitest suite runs."""

import pytest

from conftest import load_vectors, same_value
from klbr.envelope import (
    EnvelopeError,
    parse_envelope,
    parse_hello,
    parse_hook_input,
    parse_hook_result,
    parse_host_request,
)

CASES = load_vectors("envelopes.json")


def _run(case: dict):
    entry = case.get("entry", "envelope")
    value = case["input"]
    if entry == "envelope":
        identity = case.get("identity", {})
        return parse_envelope(value, identity.get("session_id"), identity.get("generation"))
    if entry == "host_request":
        return parse_host_request(value)
    if entry == "hook_input":
        return parse_hook_input(case["slot"], value)
    if entry == "hook_result":
        return parse_hook_result(case["slot"], value)
    if entry == "hello":
        return parse_hello(value, case.get("role"))
    raise AssertionError(f"unknown entry {entry!r} in {case['description']!r}")


def test_the_file_holds_enough_cases():
    descriptions = [case["description"] for case in CASES]
    assert len(set(descriptions)) == len(descriptions)
    assert sum(1 for case in CASES if "error" in case) >= 60
    for case in CASES:
        assert ("expected" in case) != ("error" in case), case["description"]


@pytest.mark.parametrize("case", CASES, ids=[case["description"] for case in CASES])
def test_vector(case):
    if "error" in case:
        with pytest.raises(EnvelopeError) as caught:
            _run(case)
        assert {"code": caught.value.code, "path": caught.value.path} == case["error"]
    else:
        output = _run(case)
        expected = case["input"] if case["expected"] == "input" else case["expected"]
        assert same_value(output, expected)
        assert output is not case["input"]
