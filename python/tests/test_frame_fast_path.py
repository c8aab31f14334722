"""The codec's fast paths never decide differently from the exact slow paths.

decode_payload and decode_payload_exhaustively read every fixtures/frame vector, every
JSONTestSuite file (with its pinned C1 outcome) and random payloads (hypothesis) shaped to reach
each of the fast path's ways: short texts, long texts of long strings, long texts of many small
values. encode_payload and encode_payload_exactly see every encode vector and random values,
refused ones included (tuples, subclasses, surrogates, big integers, non-finite, deep, cycles).
"""

from __future__ import annotations

import enum
import json
import math
import os
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools.frame_vectors import case_chunks, load_frame_files, revive
from klbr.frame import (
    FrameDecoder, FrameError, decode_payload, decode_payload_exhaustively, encode_frame, encode_payload, encode_payload_exactly
)

SUITE = Path(__file__).resolve().parents[2] / "fixtures" / "jsontestsuite"
EXPECTED = json.loads((SUITE / "expected.json").read_text(encoding="utf-8"))["cases"]


def _outcome(decode, payload: bytes) -> str:
    try:
        # dumps tells 1 from 1.0 and True, and keeps key order.
        return "ok " + json.dumps(decode(payload))
    except FrameError as error:
        return error.code


def _agree(payload: bytes) -> str:
    fast = _outcome(decode_payload, payload)
    assert fast == _outcome(decode_payload_exhaustively, payload), payload[:200]
    # The same payload as a memoryview slice of a longer buffer (how the frame reader passes it).
    assert _outcome(decode_payload, memoryview(b"xx" + payload)[2:]) == fast
    # A bytearray (how a payload split across chunks is passed) takes the same way as a view.
    assert _outcome(decode_payload, bytearray(payload)) == fast
    return fast


def _payloads_of(stream: bytes) -> list[bytes]:
    out, at = [], 0
    while at + 4 <= len(stream):
        n = int.from_bytes(stream[at : at + 4], "big")
        out.append(stream[at + 4 : at + 4 + n])
        at += 4 + n
    return out


def test_every_frame_vector():
    seen = 0
    for _, kind, cases in load_frame_files():
        if kind != "decode":
            continue
        for case in cases:
            stream = b"".join(case_chunks(case["input"]))
            for payload in [*_payloads_of(stream), stream[4:]]:
                if payload and len(payload) <= 1_048_576:
                    _agree(payload)
                    seen += 1
    assert seen > 100


@pytest.mark.parametrize("case", EXPECTED, ids=[c["file"] for c in EXPECTED])
def test_jsontestsuite_file(case):
    payload = (SUITE / "test_parsing" / case["file"]).read_bytes()
    got = _agree(payload)
    assert (got if not got.startswith("ok") else "ok") == case["outcome"]


def test_jsontestsuite_is_whole():
    files = sorted(p.name for p in (SUITE / "test_parsing").iterdir())
    assert files == [c["file"] for c in EXPECTED] and len(files) == 318


@pytest.mark.parametrize("member", ['"k":"é"', '"k":"✓"', '"k":"\\u00e9"', '"k":1', '"k":1,"k":2'])
@pytest.mark.parametrize("size", [2040, 2048, 2049, 2100, 4200])
def test_short_limit_in_bytes_and_characters(member, size):
    # decode_payload picks its way by payload bytes: 2100 or 4200 bytes of "é" are at most 2048
    # characters, and take the long way; every way agrees with the exhaustive path.
    head = ("{" + member + ',"p":"').encode()
    fill = size - len(head) - 2
    payload = head + ("é" * (fill // 2) + "x" * (fill % 2)).encode() + b'"}'
    assert len(payload) == size
    _agree(payload)
    _agree(b"\xef\xbb\xbf" + payload)  # a BOM: refused the same way, whichever path saw it
    _agree(payload + b" ")  # trailing whitespace: read by the exhaustive path


TOKENS = [
    "{", "}", "[", "]", ",", ":", " ", "\n", '"a"', '"b"', '"\\u0061"', '"\\ud800"', '"\\udc00"', '"\\ud83d\\ude00"',
    '"😀"', '"é"', '"\\\\"', '"\\""', "1e400", "-1e400", "1e308", "9007199254740991", "9007199254740992",
    "12345678901234567890", "1.5", "-0", "0", "NaN", "Infinity", "true", "null", '"\\u003a"', '":"', '"a:b"',
    "[[[[[[[[[[[[[[[[", "]]]]]]]]]]]]]]]]", '{"k":', '"k":1,"k":2', "\ufeff", '"x',
]
SOUP = st.lists(st.sampled_from(TOKENS), min_size=1, max_size=40).map("".join)
# A long string (pushes the text past the short limit) and many small values (the dense way).
PADDING = st.sampled_from(["", '"' + "word: ✓ \\n " * 300 + '",', '"' + "x" * 3000 + '",', "1,2.5,true," * 400])
SETTINGS = settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(SOUP, PADDING, st.booleans())
def test_token_soup(soup, padding, wrap):
    text = f"[{padding}{soup}]" if wrap else soup
    _agree(text.encode("utf-8", "surrogatepass"))


@SETTINGS
@given(st.binary(max_size=64))
def test_random_bytes(data):
    if data:
        _agree(data)


keys = st.one_of(st.text(max_size=6), st.sampled_from(["a", "a:b", "k", "__proto__"]))
leaves = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**60), max_value=2**60),
    st.floats(allow_nan=False), st.text(max_size=8), st.sampled_from(["\ud800", "x" * 2100]),
)
values = st.recursive(leaves, lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(keys, c, max_size=4)),
                      max_leaves=40)


@SETTINGS
@given(values, st.sampled_from([0, 1, 2]))
def test_values_with_duplicates_and_escapes(value, style):
    # ensure_ascii spells every non-ASCII character (and a surrogate) as a \u escape.
    text = json.dumps(value, ensure_ascii=style == 1, allow_nan=True)
    if style == 2 and text.startswith("{") and len(text) > 2:
        text = text[:-1] + "," + text[1:]  # every key of the top object twice
    _agree(text.encode("utf-8", "surrogatepass"))


def _encoded(encode, value) -> str:
    try:
        return "ok " + encode(value).hex()
    except FrameError as error:
        return f"{error.code} {error}"


def _encodes_alike(value) -> None:
    assert _encoded(encode_payload, value) == _encoded(encode_payload_exactly, value)


def test_every_encode_vector():
    seen = 0
    for _, kind, cases in load_frame_files():
        for case in cases if kind == "encode" else []:
            _encodes_alike(revive(case["input"]["value"]))
            seen += 1
    assert seen > 10


class _Int(int):
    pass


class _Str(str):
    pass


class _Color(enum.IntEnum):
    RED = 1


def _cycle() -> list:
    a: list = [1]
    a.append({"x": a})
    return a


def _deep(n: int) -> list:
    out: list = []
    for _ in range(n):
        out = [out]
    return out


ODD_VALUES = [
    (1, 2), _Int(3), _Str("s"), _Color.RED, {1: "a"}, {None: 1}, b"x", {"s"}, math.nan, math.inf, -math.inf,
    2**53, -(2**53), 2**53 - 1, "\ud800", "a\udfffb", 1e308, -0.0, _cycle(), _deep(127), _deep(128), _deep(129),
    "x" * 1_048_570, ["x" * 600_000, "y" * 600_000], object(),
]
ODD = st.sampled_from(ODD_VALUES)
encodable = st.recursive(
    st.one_of(leaves, ODD),
    lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(keys, c, max_size=4)),
    max_leaves=30,
)


@SETTINGS
@given(encodable)
def test_encoders_agree(value):
    _encodes_alike(value)


def test_encoders_agree_on_long_values():
    # The C encoder hands a long text back in several chunks.
    rows = [{"id": n, "name": f"row-{n}", "score": n * 0.25, "ok": n % 3 == 0, "tags": ["a", "é"]} for n in range(9000)]
    for value in (rows, {"rows": rows}, ["x" * 300_000, "✓" * 200_000], [[n, str(n)] for n in range(50_000)]):
        data = encode_payload(value)
        assert data == encode_payload_exactly(value)
        assert decode_payload(data) == value


def test_encoders_agree_on_the_odd_ones():
    for value in ODD_VALUES:
        _encodes_alike(value)
        _encodes_alike({"k": [value]})


# FrameDecoder.feed reads the whole frames of a bytes chunk that starts at a frame boundary
# straight from it (short payloads sliced out); any other chunk (a bytearray, a chunk after a
# partial frame) takes the general loop. Both must give the same values and the same error, with
# the same values before it.
def _stream_outcome(chunks) -> tuple[str, str]:
    decoder = FrameDecoder()
    values: list = []
    try:
        for chunk in chunks:
            values.extend(decoder.feed(chunk))
        decoder.eof()
        return "ok", json.dumps(values)
    except FrameError as error:
        return error.code, json.dumps(values + list(error.values))


def _streams_agree(stream: bytes, note: str) -> None:
    whole = _stream_outcome([stream])
    assert whole == _stream_outcome([bytearray(stream)]), note  # the general loop, one chunk
    assert whole == _stream_outcome([stream[i : i + 1] for i in range(len(stream))] if len(stream) < 4096 else [bytearray(stream)]), note
    cut = len(stream) // 3
    assert whole == _stream_outcome([stream[:cut], stream[cut:]]), note  # a bytes chunk after a partial frame


def test_whole_frames_agree_with_the_general_loop_on_every_vector():
    seen = 0
    for _, kind, cases in load_frame_files():
        if kind != "decode":
            continue
        for case in cases:
            _streams_agree(b"".join(case_chunks(case["input"])), case.get("description", ""))
            seen += 1
    assert seen > 50


# Pieces of a stream: good frames short and long, bad payloads, bad or cut headers.
_GOOD = [{"kind": "x", "n": 1}, [1, 2.5, None], "é✓", {"t": "w: " * 900}, 9007199254740991]
_PIECES = [
    *(encode_frame(v) for v in _GOOD),
    b"\x00\x00\x00\x03[1,", b"\x00\x00\x00\x02\xff\xfe", b'\x00\x00\x00\x0b{"a":1,"a"}', b'\x00\x00\x00\x0d{"a":1,"a":2}',
    b"\x00\x00\x00\x00", b"\x00\x20\x00\x01", b"\x00\x00", b"\x00\x00\x00\x05ab", b"\x00\x00\x00\x0412345678901234567890"[:8],
]


def test_whole_frames_agree_with_the_general_loop_on_random_streams():
    seed = int(os.environ.get("KLBR_TEST_SEED", random.randrange(1 << 32)))
    rng = random.Random(seed)
    for round_ in range(400):
        pieces = [rng.choice(_PIECES) for _ in range(rng.randrange(1, 12))]
        stream = b"".join(pieces)
        _streams_agree(stream, f"seed {seed} (KLBR_TEST_SEED), round {round_}: {stream[:120]!r}")
