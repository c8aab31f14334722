"""klbr.frame unit tests: encoder refusals, decoder state, read_frame, messages."""

from __future__ import annotations

import asyncio
import enum
import inspect
import json
import math
import sys
from collections import OrderedDict

import pytest

from klbr import frame
from klbr.frame import (
    FRAME_ERROR_CODES,
    MAX_DEPTH,
    MAX_FRAME_BYTES,
    FrameDecoder,
    FrameError,
    decode_payload,
    encode_frame,
    encode_payload,
    read_frame,
)


def _code(fn, *args) -> FrameError:
    with pytest.raises(FrameError) as raised:
        fn(*args)
    return raised.value


def test_module_surface():
    assert sorted(frame.__all__) == sorted([
        "FRAME_ERROR_CODES", "HEADER_BYTES", "MAX_DEPTH", "MAX_FRAME_BYTES", "MAX_SAFE_INTEGER", "FrameDecoder",
        "FrameError", "decode_payload", "encode_frame", "encode_payload", "read_frame",
    ])
    assert MAX_FRAME_BYTES == 1_048_576 and MAX_DEPTH == 128
    assert set(FRAME_ERROR_CODES) == {
        "FRAME_EMPTY", "FRAME_TOO_LARGE", "FRAME_TRUNCATED", "FRAME_INVALID_UTF8", "FRAME_BOM", "FRAME_INVALID_JSON",
        "FRAME_DUPLICATE_KEY", "FRAME_LONE_SURROGATE", "FRAME_NON_FINITE", "FRAME_UNSAFE_INTEGER", "FRAME_TOO_DEEP",
        "FRAME_UNENCODABLE", "FRAME_POISONED",
    }


class Color(enum.IntEnum):
    RED = 1


class Text(str):
    pass


@pytest.mark.parametrize(
    "value",
    [
        (1, 2),
        {1, 2},
        b"bytes",
        bytearray(b"x"),
        Color.RED,
        Text("x"),
        OrderedDict(a=1),
        {1: "int key"},
        {("t",): 1},
        object(),
        1 + 2j,
        math.nan,
        math.inf,
        -math.inf,
        2**53,
        -(2**53),
        10**400,
        "\ud800",
        "\ud83d\ude00",  # two surrogate code points are not a character in a str
        {"\udc00": 1},
        [None, {"a": [math.nan]}],
    ],
    ids=repr,
)
def test_encoders_refuse_what_json_dumps_would_change_or_drop(value):
    for encode in (encode_payload, encode_frame):
        assert _code(encode, value).code == "FRAME_UNENCODABLE"


def test_bool_is_not_an_int_and_floats_keep_their_form():
    assert encode_payload([True, False, 1, 1.0, 1e20, 2.5e-7]) == b"[true,false,1,1.0,1e+20,2.5e-07]"
    assert decode_payload(encode_payload([True, 1, 1.0])) == [True, 1, 1.0]
    assert [type(v) for v in decode_payload(b"[true,1,1.0]")] == [bool, int, float]


def test_encoder_messages_name_the_place():
    assert ".a[1]" in str(_code(encode_payload, {"a": [0, math.inf]}))
    assert "cycle" in str(_code(encode_payload, _cycle()))
    assert "tuple" in str(_code(encode_payload, {"a": (1,)}))


def _cycle():
    a: list = []
    a.append({"again": a})
    return a


def test_encoder_depth_and_size():
    value: object = 0
    for _ in range(MAX_DEPTH):
        value = [value]
    assert decode_payload(encode_payload(value)) == value
    assert _code(encode_payload, [value]).code == "FRAME_TOO_DEEP"
    assert _code(encode_payload, "x" * (MAX_FRAME_BYTES - 1)).code == "FRAME_TOO_LARGE"
    assert len(encode_payload("x" * (MAX_FRAME_BYTES - 2))) == MAX_FRAME_BYTES


def test_encoder_refuses_strings_that_cannot_fit_before_serializing():
    error = _code(encode_payload, ["x" * 700_000, {"k" * 400_000: 1}])
    assert error.code == "FRAME_TOO_LARGE" and "at least 1100000 bytes" in str(error)


def test_encoder_bounds_a_shared_subtree_explosion():
    value: object = 0
    for _ in range(40):
        value = [value, value]
    assert _code(encode_payload, value).code == "FRAME_TOO_LARGE"


def test_encode_frame_header():
    data = encode_frame("😀é")
    assert data[:4] == (8).to_bytes(4, "big") and data[4:] == '"😀é"'.encode()


def test_decode_payload_accepts_bytes_like():
    assert decode_payload(bytearray(b"[1]")) == [1]
    assert decode_payload(memoryview(b"xx[2]")[2:]) == [2]


def test_decode_never_hands_bytes_to_json_loads():
    # json.loads(bytes) would guess UTF-16 here and succeed.
    assert _code(decode_payload, "[1]".encode("utf-16-le")).code == "FRAME_INVALID_JSON"
    assert _code(decode_payload, "[1]".encode("utf-32")).code == "FRAME_INVALID_UTF8"


def test_decoder_messages_name_the_value():
    assert "byte 3 (c3)" in str(_code(decode_payload, '"ab\u00e9"'.encode()[:4]))
    assert '"id"' in str(_code(decode_payload, b'{"id":1,"id":2}'))
    assert "2e999" in str(_code(decode_payload, b"[2e999]"))
    assert "90071992547409930" in str(_code(decode_payload, b"[90071992547409930]"))
    assert "10000 characters" in str(_code(decode_payload, b"9" * 10_000))
    assert "1048577" in str(_code(decode_payload, b" " * (MAX_FRAME_BYTES + 1)))


def test_recursion_error_is_a_frame_error(monkeypatch):
    def boom(_self, _text):
        raise RecursionError
    # The overflow sends the decode to the slow path, whose parser then runs out of stack.
    monkeypatch.setattr(frame.json.JSONDecoder, "decode", boom)
    assert _code(decode_payload, b"[1e400]").code == "FRAME_TOO_DEEP"


def test_recursion_error_on_the_slow_path_is_a_frame_error():
    # An overflow first sends the decode to the slow path, which then runs out of stack.
    payload = b"[1e400," + b"[" * 100 + b"]" * 100 + b"]"
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + 60)
    try:
        error = _code(decode_payload, payload)
    finally:
        sys.setrecursionlimit(old)
    assert error.code == "FRAME_TOO_DEEP"


def test_decoder_state_and_buffered_bytes():
    decoder = FrameDecoder()
    data = encode_frame([1, 2, 3])
    assert decoder.buffered_bytes == 0
    assert decoder.feed(data[:2]) == [] and decoder.buffered_bytes == 2
    assert decoder.feed(data[2:6]) == [] and decoder.buffered_bytes == 6
    assert decoder.feed(data[6:]) == [[1, 2, 3]] and decoder.buffered_bytes == 0
    decoder.eof()
    assert decoder.feed(encode_frame(2)) == [2]


def test_decoder_error_carries_earlier_values_and_poisons():
    decoder = FrameDecoder()
    error = _code(decoder.feed, encode_frame(1) + encode_frame(2) + (4).to_bytes(4, "big") + b"[1,]" + encode_frame(3))
    assert error.code == "FRAME_INVALID_JSON" and error.values == [1, 2]
    assert decoder.poisoned and decoder.buffered_bytes == 0
    for _ in range(3):
        assert _code(decoder.feed, encode_frame(0)).code == "FRAME_POISONED"
    assert _code(decoder.eof).code == "FRAME_POISONED"


def test_decoder_too_large_from_the_header_alone():
    decoder = FrameDecoder()
    error = _code(decoder.feed, b"\x00\x10\x00\x01")
    assert error.code == "FRAME_TOO_LARGE" and "1048577" in str(error)
    assert decoder.buffered_bytes == 0


def test_decoder_copies_a_split_payload_out_of_the_callers_buffer():
    decoder = FrameDecoder()
    data = bytearray(encode_frame("abcdef"))
    first = bytearray(data[:7])
    decoder.feed(first)
    first[:] = b"A" * 7
    assert decoder.feed(bytes(data[7:])) == ["abcdef"]


def test_eof_inside_a_frame_is_truncation():
    decoder = FrameDecoder()
    decoder.feed(encode_frame("hello")[:7])
    error = _code(decoder.eof)
    assert error.code == "FRAME_TRUNCATED" and "3 of 7 payload bytes" in str(error)
    assert decoder.poisoned


def _reader(data: bytes, eof: bool = True) -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    if eof:
        reader.feed_eof()
    return reader


def test_read_frame_values_then_clean_eof():
    async def main():
        reader = _reader(encode_frame({"a": 1}) + encode_frame([2]))
        return [await read_frame(reader), await read_frame(reader), await read_frame(reader)]
    assert asyncio.run(main()) == [{"a": 1}, [2], None]


@pytest.mark.parametrize(
    ("data", "code"),
    [(b"\x00\x00", "FRAME_TRUNCATED"), (b"\x00\x00\x00\x05[1", "FRAME_TRUNCATED"),
     (b"\x00\x00\x00\x00", "FRAME_EMPTY"), (b"\xff\xff\xff\xff", "FRAME_TOO_LARGE")],
)
def test_read_frame_errors(data, code):
    async def main():
        return await read_frame(_reader(data))
    assert _code(asyncio.run, main()).code == code


def test_read_frame_refuses_a_huge_header_without_waiting_for_its_payload():
    async def main():
        # No EOF: a reader that trusted the header would wait for 4 GiB forever.
        return await asyncio.wait_for(read_frame(_reader(b"\x7f\xff\xff\xff", eof=False)), timeout=5)
    assert _code(asyncio.run, main()).code == "FRAME_TOO_LARGE"


def test_frame_error_str_has_the_code():
    error = FrameError("FRAME_EMPTY", "frame length 0")
    assert str(error) == "FRAME_EMPTY: frame length 0" and error.code == "FRAME_EMPTY" and error.values == []
    assert isinstance(error, Exception)


def test_oracle_round_trip(tmp_path):
    from tools.frame_oracle import decode_stream
    assert decode_stream(encode_frame(1) + b"\x00\x00\x00\x03[1") == {"values": [1], "code": "FRAME_TRUNCATED"}
    assert json.dumps(decode_stream(encode_frame({"a": "😀"}))) == '{"values": [{"a": "\\ud83d\\ude00"}], "code": null}'
