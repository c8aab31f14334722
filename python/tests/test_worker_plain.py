"""The plain execute/interrupt reader: the general decoder's message, or nothing (never another outcome)."""

from __future__ import annotations

import json
import socket

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from klbr.envelope import EnvelopeError, parse_envelope
from klbr.frame import FrameError, decode_payload
from klbr.worker.connection import Connection
from klbr.worker.plain import PlainReader

SESSION, GENERATION = "s-1", "g-1"
READER = PlainReader(json.dumps(SESSION), json.dumps(GENERATION))


def _host_json(value) -> str:
    """What the host's JSON.stringify writes for ``value`` (no whitespace, UTF-8, \\u escapes lowercase)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _general(payload: bytes):
    """The general path's message, or the error it raises."""
    try:
        return parse_envelope(decode_payload(payload), SESSION, GENERATION)["message"]
    except (FrameError, EnvelopeError) as error:
        return error


def _check(payload: bytes) -> None:
    got = READER.read(payload)
    if got is None:
        return  # the general path decides (and reports any error itself)
    expected = _general(payload)
    assert not isinstance(expected, Exception), (payload, expected)
    assert got == expected
    assert list(got) == list(expected)


def _envelope(message: dict, session=SESSION, generation=GENERATION, version=1) -> dict:
    return {"version": version, "session_id": session, "generation": generation, "message": message}


def test_the_hosts_execute_and_interrupt_are_read_plainly():
    for code in ["1+1", "", 'print("x")\n\t\\', "é\u2028\U0001f600", "\x01\x1f"]:
        payload = _host_json(_envelope({"kind": "execute", "id": "c-1", "code": code})).encode()
        assert READER.read(payload) == {"kind": "execute", "id": "c-1", "code": code}
        _check(payload)
    payload = _host_json(_envelope({"kind": "interrupt", "id": "a" * 128})).encode()
    assert READER.read(payload) == {"kind": "interrupt", "id": "a" * 128}


_EXECUTE = '{"version":1,"session_id":"s-1","generation":"g-1","message":{"kind":"execute","id":"c-1","code":"1+1"}}'
_INTERRUPT = '{"version":1,"session_id":"s-1","generation":"g-1","message":{"kind":"interrupt","id":"c-1"}}'


@pytest.mark.parametrize(
    "text",
    [
        _EXECUTE.replace('"code":"1+1"', '"code":"\\ud800"'),  # lone surrogate: FRAME_LONE_SURROGATE
        _EXECUTE.replace('"code":"1+1"', '"code":"1\x01"'),  # raw control character: invalid JSON
        _EXECUTE.replace('"code":"1+1"', '"code":"1+1","code":"2"'),  # duplicate key
        _EXECUTE.replace('"code":"1+1"', '"code":"1+1","extra":1'),  # unknown field
        _EXECUTE.replace('"code":"1+1"', '"code":"\\q"'),  # bad escape
        _EXECUTE.replace('"id":"c-1"', '"id":"c 1"'),  # not an identifier
        _EXECUTE.replace('"id":"c-1"', '"id":"c\\u002d1"'),  # an escape in the id: valid, left to the general path
        _EXECUTE.replace('"id":"c-1"', '"id":""'),
        _EXECUTE.replace('"id":"c-1"', '"id":"' + "a" * 129 + '"'),
        _EXECUTE.replace('"session_id":"s-1"', '"session_id":"s-2"'),
        _EXECUTE.replace('"version":1', '"version":1.0'),
        _EXECUTE + " ",
        _EXECUTE[:-1],
        _EXECUTE + "}",
        "\ufeff" + _EXECUTE,
        _INTERRUPT.replace('"id":"c-1"', '"id":"c-1","code":"x"'),
        _INTERRUPT.replace('"id":"c-1"', '"id":"c\\"1"'),
        _INTERRUPT[:-2] + ',"x":1}}',
    ],
)
def test_a_payload_off_the_plain_layout_is_left_to_the_general_path(text):
    payload = text.encode("utf-8", "surrogatepass")
    assert READER.read(payload) is None
    _check(payload)


def test_a_code_over_the_plain_size_is_left_to_the_schema():
    big = "é" * 65_537  # 131,074 bytes: within the limit, but the schema measures it
    payload = _host_json(_envelope({"kind": "execute", "id": "c-1", "code": big})).encode()
    assert READER.read(payload) is None
    assert READER.read(b"\xff" + _EXECUTE.encode()) is None  # invalid UTF-8


_pieces = st.sampled_from(
    ['"', "\\", "\\u", "\\ud800", "\\udc00", "\\ud83d\\ude00", "\\n", "\\x", "\x00", "\x1f", "}", "}}", ",", ":", " ", "é", "1", "a"]
)


@st.composite
def _mutated(draw):
    kind = draw(st.sampled_from(["execute", "interrupt"]))
    message = {"kind": kind, "id": draw(st.from_regex(r"[A-Za-z0-9_.\-]{1,12}", fullmatch=True))}
    if kind == "execute":
        message["code"] = draw(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20))
    text = _host_json(_envelope(message))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 3))
        text = text[:at] + draw(_pieces) + text[at + cut :]
    return text.encode("utf-8", "surrogatepass")


@settings(max_examples=1500, deadline=None)
@given(payload=_mutated())
def test_the_plain_reader_gives_the_general_paths_message_or_nothing(payload):
    _check(payload)


def _frame(payload: bytes) -> bytes:
    return len(payload).to_bytes(4, "big") + payload


@settings(max_examples=300, deadline=None)
@given(payload=_mutated(), split=st.integers(0, 200))
def test_a_chunk_decodes_to_the_same_messages_and_end_with_and_without_the_reader(payload, split):
    fast = Connection(socket.socket(socket.AF_UNIX), SESSION, GENERATION)
    slow = Connection(socket.socket(socket.AF_UNIX), SESSION, GENERATION)
    slow._plain_reader = None
    try:
        data = _frame(payload) + _frame(_EXECUTE.encode())
        for chunk in (data[:split], data[split:]) if split else (_frame(payload), _frame(_EXECUTE.encode())):
            (got, got_end), (want, want_end) = fast._decode(chunk), slow._decode(chunk)
            assert got == want
            assert (got_end and (got_end.code, got_end.detail)) == (want_end and (want_end.code, want_end.detail))
            if want_end is not None:
                break
    finally:
        fast.sock.close()
        slow.sock.close()


def test_the_connection_reads_a_whole_plain_frame_without_its_decoder():
    conn = Connection(socket.socket(socket.AF_UNIX), SESSION, GENERATION)
    try:
        class Idle:
            buffered_bytes = 0
            poisoned = False

            def feed(self, data):
                raise AssertionError("the general decoder was used")

        conn._decoder = Idle()
        assert conn._decode(_frame(_EXECUTE.encode())) == ([{"kind": "execute", "id": "c-1", "code": "1+1"}], None)
    finally:
        conn.sock.close()
