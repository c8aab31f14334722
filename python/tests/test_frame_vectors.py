"""Every fixtures/frame vector through klbr.frame: FrameDecoder, read_frame and the encoders."""

from __future__ import annotations

import asyncio
import math

import pytest

from tools.frame_vectors import case_chunks, load_frame_files, revive
from klbr.frame import FrameDecoder, FrameError, decode_payload, encode_frame, encode_payload, read_frame

FILES = load_frame_files()
DECODE = [(f"{name}: {c['description']}", c) for name, kind, cases in FILES if kind == "decode" for c in cases]
ENCODE = [(f"{name}: {c['description']}", c) for name, kind, cases in FILES if kind == "encode" for c in cases]


def _run(chunks: list[bytes], end: bool) -> tuple[list, str | None]:
    decoder = FrameDecoder()
    values: list = []
    for k, chunk in enumerate(chunks):
        try:
            values += decoder.feed(chunk)
        except FrameError as error:
            values += error.values
            assert decoder.poisoned
            for later in chunks[k + 1 :]:
                with pytest.raises(FrameError) as poisoned:
                    decoder.feed(later)
                assert poisoned.value.code == "FRAME_POISONED"
            with pytest.raises(FrameError) as poisoned:
                decoder.eof()
            assert poisoned.value.code == "FRAME_POISONED"
            return values, error.code
    if end:
        try:
            decoder.eof()
        except FrameError as error:
            return values, error.code
    return values, None


async def _read_all(stream: bytes) -> tuple[list, str | None]:
    reader = asyncio.StreamReader()
    reader.feed_data(stream)
    reader.feed_eof()
    values: list = []
    while True:
        try:
            value = await read_frame(reader)
        except FrameError as error:
            return values, error.code
        if value is None:
            return values, None
        values.append(value)


def _expected(case: dict) -> tuple[list, str | None]:
    if "error" in case:
        return revive(case.get("yielded", [])), case["error"]["code"]
    return revive(case["expected"]), None


def _same(got: tuple[list, str | None], want: tuple[list, str | None]) -> None:
    assert got[1] == want[1]
    assert got[0] == want[0]
    # == alone lets 1 == 1.0 == True slip through at the top level.
    assert [type(v) for v in got[0]] == [type(v) for v in want[0]]


def test_every_file_loads():
    names = {name for name, _, _ in FILES}
    assert {"depth.json", "duplicates.json", "encode.json", "length.json", "numbers.json", "precedence.json",
            "stream.json", "surrogates.json", "syntax.json", "utf8.json", "valid.json"} <= names


@pytest.mark.parametrize("case", [c for _, c in DECODE], ids=[i for i, _ in DECODE])
def test_decode_vector(case: dict) -> None:
    want = _expected(case)
    chunks = case_chunks(case["input"])
    end = case["input"].get("end", True)
    whole = b"".join(chunks)
    _same(_run(chunks, end), want)
    _same(_run([whole], end), want)
    if len(whole) <= 4096:
        _same(_run([whole[i : i + 1] for i in range(len(whole))], end), want)
    if end:
        _same(asyncio.run(_read_all(whole)), want)
    if len(whole) > 4 and int.from_bytes(whole[:4], "big") == len(whole) - 4 and "yielded" not in case:
        try:
            got = ([decode_payload(whole[4:])], None)
        except FrameError as error:
            got = ([], error.code)
        _same(got, want)


@pytest.mark.parametrize("case", [c for _, c in ENCODE], ids=[i for i, _ in ENCODE])
def test_encode_vector(case: dict) -> None:
    value = revive(case["input"]["value"])
    if "error" in case:
        for encode in (encode_payload, encode_frame):
            with pytest.raises(FrameError) as raised:
                encode(value)
            assert raised.value.code == case["error"]["code"]
        return
    payload = encode_payload(value)
    want = case["expected"]
    if "payload" in want:
        assert payload.decode("utf-8") == want["payload"]
    if "length" in want:
        assert len(payload) == want["length"]
    frame = encode_frame(value)
    assert frame[:4] == len(payload).to_bytes(4, "big") and frame[4:] == payload
    assert decode_payload(payload) == value
