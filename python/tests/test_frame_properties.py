"""Property tests for klbr.frame (hypothesis): round trip, chunking, mutation, every-offset splits."""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from klbr.frame import MAX_DEPTH, MAX_SAFE_INTEGER, FrameDecoder, FrameError, decode_payload, encode_frame, encode_payload

# Strings of characters (no surrogate code points), keys including the awkward ones.
text = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
keys = st.one_of(text, st.sampled_from(["__proto__", "constructor", "1", "", "a:b"]))
numbers = st.one_of(
    st.integers(min_value=-MAX_SAFE_INTEGER, max_value=MAX_SAFE_INTEGER),
    st.floats(allow_nan=False, allow_infinity=False),
)
values = st.recursive(
    st.one_of(st.none(), st.booleans(), numbers, text),
    lambda children: st.one_of(st.lists(children, max_size=5), st.dictionaries(keys, children, max_size=5)),
    max_leaves=30,
)

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _same(a, b) -> bool:
    # Python round-trips exactly: the same types (True is not 1, 1.0 is not 1, -0.0 stays),
    # the same key order. Plain == cannot see those ([True] == [1], {"a": 1.0} == {"a": 1}).
    return json.dumps(a) == json.dumps(b)


def _outcome(chunks: list[bytes]) -> tuple[list, str | None]:
    decoder = FrameDecoder()
    out: list = []
    try:
        for chunk in chunks:
            out += decoder.feed(chunk)
        decoder.eof()
    except FrameError as error:
        return out + error.values, error.code
    return out, None


def _assert_c1(value, depth: int = 0) -> None:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, float):
        assert math.isfinite(value)
    elif isinstance(value, int):
        assert abs(value) <= MAX_SAFE_INTEGER
    elif isinstance(value, str):
        value.encode("utf-8")  # raises on any surrogate
    elif isinstance(value, list):
        assert depth < MAX_DEPTH
        for item in value:
            _assert_c1(item, depth + 1)
    else:
        assert type(value) is dict and depth < MAX_DEPTH
        for key, item in value.items():
            key.encode("utf-8")
            _assert_c1(item, depth + 1)


@FAST
@given(values)
def test_round_trip(value):
    decoded = decode_payload(encode_payload(value))
    assert _same(decoded, value)


@FAST
@given(st.lists(values, min_size=1, max_size=4), st.lists(st.integers(min_value=0), max_size=8))
def test_any_chunking_yields_the_same_values(items, cuts):
    stream = b"".join(encode_frame(v) for v in items)
    offsets = sorted({c % (len(stream) + 1) for c in cuts})
    chunks, start = [], 0
    for at in [*offsets, len(stream)]:
        chunks.append(stream[start:at])
        start = at
    out, code = _outcome(chunks)
    assert code is None
    assert _same(out, items)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(values, min_size=1, max_size=3),
    st.lists(st.tuples(st.integers(min_value=0, max_value=6), st.integers(min_value=0), st.integers(0, 255)),
             min_size=1, max_size=4),
    st.integers(min_value=0),
)
def test_mutated_streams_only_raise_frame_errors_and_never_yield_bad_values(items, edits, cut):
    data = bytearray(b"".join(encode_frame(v) for v in items))
    for kind, where, byte in edits:
        at = where % (len(data) + 1)
        if kind == 0 and at < len(data):
            data[at] ^= 1 << (byte % 8)
        elif kind == 1:
            data.insert(at, byte)
        elif kind == 2 and at < len(data):
            del data[at]
        elif kind == 3 and at < len(data):
            data[at] = byte
        elif kind == 4:
            del data[at:]
        elif kind == 5:
            data[at:at] = data[at : at + 1 + byte % 8]
        elif kind == 6 and len(data) >= 4:
            data[byte % 4] = byte
    stream = bytes(data)
    whole = _outcome([stream])
    for value in whole[0]:
        _assert_c1(value)
    k = cut % (len(stream) + 1)
    assert _outcome([stream[:k], stream[k:]]) == whole


STREAM_VALUES = [
    {"version": 1, "session_id": "root", "generation": "g-1", "message": {"kind": "execute", "id": "op-1", "code": "print('é😀')"}},
    [1, -2.5, True, None, "\u2028"],
    "😀" * 5,
]
STREAM = b"".join(encode_frame(v) for v in STREAM_VALUES)


def test_split_at_every_offset():
    for k in range(len(STREAM) + 1):
        assert _outcome([STREAM[:k], STREAM[k:]]) == (STREAM_VALUES, None)


def test_split_at_every_pair_of_offsets():
    for a in range(0, len(STREAM) + 1, 3):
        for b in range(a, len(STREAM) + 1, 5):
            assert _outcome([STREAM[:a], STREAM[a:b], STREAM[b:]]) == (STREAM_VALUES, None)


def test_one_byte_at_a_time():
    assert _outcome([STREAM[i : i + 1] for i in range(len(STREAM))]) == (STREAM_VALUES, None)


def test_cut_at_every_offset_inside_a_frame_is_truncation():
    boundaries, at = set(), 0
    for value in STREAM_VALUES:
        at += len(encode_frame(value))
        boundaries.add(at)
    for k in range(1, len(STREAM)):
        if k in boundaries:
            continue
        values, code = _outcome([STREAM[:k]])
        assert code == "FRAME_TRUNCATED" and values == STREAM_VALUES[: len(values)]


def test_invalid_frame_split_anywhere_gives_the_same_outcome():
    bad = encode_frame(1) + (13).to_bytes(4, "big") + b'{"a":1,"a":2}' + encode_frame(3)
    for k in range(len(bad) + 1):
        assert _outcome([bad[:k], bad[k:]]) == ([1], "FRAME_DUPLICATE_KEY")
