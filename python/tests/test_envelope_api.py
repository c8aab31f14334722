"""klbr.envelope: the API around the shared vectors (builders, errors, constants, parity of names)."""

import re
from pathlib import Path

import pytest

import klbr.envelope as envelope
from klbr.envelope import (
    ENVELOPE_ERROR_CODES,
    HOOK_SLOTS,
    HOST_REQUEST_METHODS,
    EnvelopeError,
    canonical_method,
    is_digest,
    is_error_code,
    is_identifier,
    make_envelope,
    parse_envelope,
    parse_hello,
    parse_hook_input,
    parse_hook_result,
    parse_host_request,
    utf8_length,
)

SRC = Path(__file__).resolve().parents[2] / "packages" / "envelope" / "src"
SHUTDOWN = {"version": 1, "session_id": "root", "generation": "g-1", "message": {"kind": "shutdown"}}


def _code(call, *args):
    with pytest.raises(EnvelopeError) as caught:
        call(*args)
    return caught.value.code


def test_every_name_in_all_exists_and_is_documented():
    for name in envelope.__all__:
        value = getattr(envelope, name)
        if callable(value):
            assert value.__doc__, name


def test_constants_match_the_typescript_package():
    limits = (SRC / "limits.ts").read_text(encoding="utf-8")
    for name, value in re.findall(r"export const (MAX_\w+|PROTOCOL_VERSION) = ([\d_]+);", limits):
        assert getattr(envelope, name) == int(value.replace("_", "")), name
    assert HOOK_SLOTS == ("attention.plan", "delivery.review")
    codes = re.findall(r'"(ENVELOPE_[A-Z_]+)"', (SRC / "error.ts").read_text(encoding="utf-8"))
    assert tuple(codes) == ENVELOPE_ERROR_CODES


def test_method_names_match_the_typescript_package():
    source = (SRC / "host-request.ts").read_text(encoding="utf-8")
    assert tuple(re.findall(r'method\("([a-z._]+)"\)', source)) == HOST_REQUEST_METHODS
    assert len(HOST_REQUEST_METHODS) == 32


def test_parse_returns_a_fresh_copy():
    parsed = parse_envelope(SHUTDOWN)
    assert parsed == SHUTDOWN
    assert parsed is not SHUTDOWN and parsed["message"] is not SHUTDOWN["message"]


def test_identity_is_checked_only_when_stated():
    assert parse_envelope(SHUTDOWN, None, None) == SHUTDOWN
    assert parse_envelope(SHUTDOWN, "root") == SHUTDOWN
    assert parse_envelope(SHUTDOWN, expected_generation="g-1") == SHUTDOWN
    assert _code(parse_envelope, SHUTDOWN, "other") == "ENVELOPE_SESSION_MISMATCH"
    assert _code(parse_envelope, SHUTDOWN, None, "g-2") == "ENVELOPE_GENERATION_MISMATCH"


def test_make_envelope_builds_and_validates():
    assert make_envelope("root", "g-1", {"kind": "interrupt", "id": "c"}) == {
        "version": 1,
        "session_id": "root",
        "generation": "g-1",
        "message": {"kind": "interrupt", "id": "c"},
    }
    assert _code(make_envelope, "a b", "g", {"kind": "shutdown"}) == "ENVELOPE_BAD_IDENTIFIER"
    assert _code(make_envelope, "s", "g", {"kind": "execute", "id": "c", "code": "x" * 262_145}) == "ENVELOPE_LIMIT_EXCEEDED"


def test_integral_floats_come_back_as_ints():
    value = make_envelope("s", "g", {"kind": "completed", "id": "c", "result": {"kind": "hook", "value": {"action": "wake", "priority": 7.0}}})
    priority = value["message"]["result"]["value"]["priority"]
    assert priority == 7 and type(priority) is int
    assert type(parse_envelope({**SHUTDOWN, "version": 1.0})["version"]) is int


def test_bools_are_not_numbers():
    assert _code(parse_hook_result, "attention.plan", {"action": "wake", "priority": True}) == "ENVELOPE_INVALID_FIELD"
    assert _code(parse_hook_result, "attention.plan", {"action": "defer", "seconds": True}) == "ENVELOPE_INVALID_FIELD"
    assert _code(parse_envelope, {**SHUTDOWN, "version": True}) == "ENVELOPE_BAD_VERSION"


def test_nan_and_infinity_are_refused_even_if_a_caller_builds_them():
    for seconds in (float("nan"), float("inf")):
        assert _code(parse_hook_result, "attention.plan", {"action": "defer", "seconds": seconds}) == "ENVELOPE_INVALID_FIELD"
    assert _code(parse_envelope, {**SHUTDOWN, "version": float("nan")}) == "ENVELOPE_BAD_VERSION"


def test_integers_beyond_the_safe_range_are_refused():
    request = {"method": "behavior.activate", "path": "/r", "expected_epoch": 2**53}
    assert _code(parse_host_request, request) == "ENVELOPE_INVALID_FIELD"
    assert parse_host_request({**request, "expected_epoch": 2**53 - 1})["expected_epoch"] == 2**53 - 1


def test_error_carries_code_path_and_value_and_names_them():
    with pytest.raises(EnvelopeError) as caught:
        parse_envelope({**SHUTDOWN, "message": {"kind": "interrupt", "id": "no way"}})
    error = caught.value
    assert (error.code, error.path, error.value) == ("ENVELOPE_BAD_IDENTIFIER", "message.id", "no way")
    assert str(error) == 'ENVELOPE_BAD_IDENTIFIER at message.id: expected an identifier (1..128 of A-Z a-z 0-9 _ . -), got "no way"'


def test_missing_values_say_nothing_and_long_values_are_cut():
    with pytest.raises(EnvelopeError) as caught:
        parse_envelope({"version": 1})
    assert str(caught.value).endswith("got nothing") and caught.value.value is None
    with pytest.raises(EnvelopeError) as caught:
        parse_envelope({**SHUTDOWN, "message": {"kind": "execute", "id": "c", "code": "x" * 300_000}})
    assert len(str(caught.value)) < 200


def test_unknown_slot_or_role_is_a_programming_error():
    with pytest.raises(ValueError):
        parse_hook_input("nope", {})
    with pytest.raises(ValueError):
        parse_hook_result("nope", {})
    with pytest.raises(ValueError):
        parse_hello({}, "admin")


def test_parse_hello_checks_the_expected_role():
    hello = {"kind": "hello", "token": "t", "role": "workbench", "revision": None, "slots": [], "skills": None}
    assert parse_hello(hello, "workbench") == hello
    assert _code(parse_hello, hello, "hooks") == "ENVELOPE_ROLE_MISMATCH"


def test_canonical_method():
    assert canonical_method("agents.open") == "peer.open"
    assert canonical_method("peer.message") == "peer.send"
    assert canonical_method("local.send") == "local.send"
    assert all(canonical_method(name) in HOST_REQUEST_METHODS for name in HOST_REQUEST_METHODS)


def test_optional_keys_stay_absent():
    assert parse_host_request({"method": "workspace.run", "argv": ["ls"]}) == {"method": "workspace.run", "argv": ["ls"]}


def test_predicates():
    assert is_identifier("g-1.x_Y") and not is_identifier("root\n") and not is_identifier("") and not is_identifier(5)
    assert not is_identifier("\u0661") and not is_identifier("x" * 129) and is_identifier("x" * 128)
    assert is_digest("ab" * 32) and not is_digest("AB" * 32) and not is_digest("ab" * 32 + "\n")
    assert is_error_code("not_found") and not is_error_code("not-found") and not is_error_code("x\n")


def test_utf8_length():
    assert utf8_length("") == 0
    assert utf8_length("abc") == 3
    assert utf8_length("\u00e9\u20ac\U0001F600") == 2 + 3 + 4
    assert utf8_length("\ud800") == 3
