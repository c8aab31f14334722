"""Cell output capture (C7): coalescing, limits, exact truncated_bytes, bounded memory."""

from __future__ import annotations

import io
import os
import threading
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from klbr.worker.capture import (
    MAX_OUTPUT_RECORDS,
    MAX_OUTPUT_TEXT_BYTES,
    CaptureStream,
    OutputCapture,
    clean_text,
    cut_utf8,
    utf8_length,
)


def b(text: str) -> int:
    return len(text.encode("utf-8"))


def test_consecutive_writes_to_one_stream_form_one_record():
    cap = OutputCapture()
    for part in ("a", "b", "c\n"):
        cap.write("stdout", part)
    cap.write("stderr", "x")
    cap.write("stderr", "y")
    cap.write("stdout", "z")
    assert cap.records == [
        {"stream": "stdout", "text": "abc\n"},
        {"stream": "stderr", "text": "xy"},
        {"stream": "stdout", "text": "z"},
    ]
    assert cap.truncated_bytes == 0


def test_empty_writes_make_no_record():
    cap = OutputCapture()
    cap.write("stdout", "")
    assert cap.records == []


def test_record_limit_drops_and_counts_the_rest():
    cap = OutputCapture()
    for i in range(MAX_OUTPUT_RECORDS):
        cap.write("stdout" if i % 2 == 0 else "stderr", "ab")
    assert len(cap.records) == MAX_OUTPUT_RECORDS
    cap.write("stdout", "héllo")  # a 257th record: dropped
    cap.write("stderr", "more")  # same stream as the last record, but after a cut: dropped too
    assert len(cap.records) == MAX_OUTPUT_RECORDS
    assert cap.records[-1] == {"stream": "stderr", "text": "ab"}
    assert cap.truncated_bytes == b("héllo") + 4


def test_byte_limit_cuts_on_a_character_boundary_and_counts_exactly():
    cap = OutputCapture()
    filler = "x" * (MAX_OUTPUT_TEXT_BYTES - 3)
    cap.write("stdout", filler)
    cap.write("stdout", "é€😀")  # 2 + 3 + 4 bytes; only "é" fits in the last 3 bytes
    assert cap.records == [{"stream": "stdout", "text": filler + "é"}]
    assert cap.truncated_bytes == 3 + 4
    cap.write("stderr", "ü")
    assert cap.truncated_bytes == 3 + 4 + 2
    total = sum(b(r["text"]) for r in cap.records)
    assert total == MAX_OUTPUT_TEXT_BYTES - 1


def test_exactly_65536_bytes_are_kept_and_one_more_is_cut():
    cap = OutputCapture()
    cap.write("stdout", "x" * 65_535)
    cap.write("stderr", "y")  # the 65,536th byte, in a record of its own
    assert [b(r["text"]) for r in cap.records] == [65_535, 1]
    assert cap.truncated_bytes == 0
    cap.write("stdout", "z")  # one past
    assert [b(r["text"]) for r in cap.records] == [65_535, 1]
    assert cap.truncated_bytes == 1


def test_exactly_256_records_are_kept_and_the_257th_is_dropped():
    cap = OutputCapture()
    for i in range(256):
        cap.write("stdout" if i % 2 == 0 else "stderr", "r")
    assert len(cap.records) == 256 and cap.truncated_bytes == 0
    cap.write("stdout", "r")  # would be the 257th
    assert len(cap.records) == 256 and cap.truncated_bytes == 1


def test_a_write_that_fits_nothing_adds_no_empty_record():
    cap = OutputCapture(max_bytes=4)
    cap.write("stdout", "abc")
    cap.write("stderr", "€")  # 3 bytes, 1 left: nothing of it fits
    assert cap.records == [{"stream": "stdout", "text": "abc"}]
    assert cap.truncated_bytes == 3


def test_lone_surrogates_become_replacement_characters():
    assert clean_text("a\ud800b") == "a\ufffdb"
    assert clean_text("\ud83d\ude00") == "😀"  # a pair written as two code points joins
    cap = OutputCapture()
    cap.write("stdout", "x\udc80")
    assert cap.records == [{"stream": "stdout", "text": "x\ufffd"}]
    assert cap.used_bytes == 1 + 3


def test_add_truncated_counts_error_cuts():
    cap = OutputCapture()
    cap.add_truncated(10)
    assert cap.truncated_bytes == 10


def test_counting_a_huge_write_does_not_copy_it():
    text = "é" * (48 << 20)  # 48 Mi characters, 96 MiB of UTF-8
    cap = OutputCapture()
    tracemalloc.start()
    try:
        cap.write("stdout", text)
        cap.write("stdout", text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert cap.truncated_bytes == 2 * 2 * len(text) - MAX_OUTPUT_TEXT_BYTES
    assert peak < 8 << 20, f"peak {peak} bytes"


@given(st.text(), st.integers(min_value=0, max_value=64))
def test_cut_utf8_is_the_longest_fitting_prefix(text, budget):
    text = clean_text(text)
    kept = cut_utf8(text, budget)
    assert text.startswith(kept)
    assert b(kept) <= budget
    if len(kept) < len(text):
        assert b(text[: len(kept) + 1]) > budget


@given(st.text())
def test_utf8_length_matches_encode(text):
    assert utf8_length(text) == b(clean_text(text))


writes = st.lists(
    st.tuples(st.sampled_from(["stdout", "stderr", "result"]), st.text(max_size=12)), max_size=60
)


@settings(max_examples=300)
@given(writes, st.integers(1, 6), st.integers(0, 80))
def test_kept_plus_truncated_is_everything_and_kept_is_a_prefix(sequence, max_records, max_bytes):
    cap = OutputCapture(max_records=max_records, max_bytes=max_bytes)
    for stream, text in sequence:
        cap.write(stream, text)
    records = cap.records
    assert len(records) <= max_records
    kept = sum(b(r["text"]) for r in records)
    assert kept <= max_bytes
    everything = sum(b(clean_text(t)) for _, t in sequence)
    assert kept + cap.truncated_bytes == everything
    # Coalesced: no two neighbouring records share a stream, none is empty.
    assert all(r["text"] for r in records)
    assert all(x["stream"] != y["stream"] for x, y in zip(records, records[1:]))
    # The kept output is a prefix of the written stream (in order, stream by stream).
    written = [(s, clean_text(t)) for s, t in sequence if t]
    merged: list[list[str]] = []
    for s, t in written:
        if merged and merged[-1][0] == s:
            merged[-1][1] += t
        else:
            merged.append([s, t])
    for index, record in enumerate(records):
        assert record["stream"] == merged[index][0]
        assert merged[index][1].startswith(record["text"])
        if index < len(records) - 1:
            assert record["text"] == merged[index][1]


def test_capture_stream_routes_writes():
    cap = OutputCapture()
    fallback = io.StringIO()
    target = {"capture": cap}
    stream = CaptureStream("stderr", lambda: target["capture"], fallback)
    assert stream.write("into the cell") == len("into the cell")
    target["capture"] = None
    stream.write("nobody's")
    assert cap.records == [{"stream": "stderr", "text": "into the cell"}]
    assert fallback.getvalue() == "nobody's"
    assert stream.encoding == "utf-8" and stream.writable() and not stream.isatty()


def test_capture_stream_fileno_is_the_real_streams_and_without_one_there_is_none():
    # Code that writes to the descriptor (a subprocess, faulthandler) reaches the process's stream.
    read, write = os.pipe()
    try:
        with os.fdopen(write, "w", closefd=False) as real:
            stream = CaptureStream("stdout", lambda: None, real)
            assert stream.fileno() == write
            os.write(stream.fileno(), b"by descriptor")
        assert os.read(read, 100) == b"by descriptor"
    finally:
        os.close(read)
        os.close(write)
    detached = CaptureStream("stdout", lambda: None, None)
    with pytest.raises(io.UnsupportedOperation):
        detached.fileno()
    assert detached.write("nowhere") == len("nowhere")


def test_live_output_gets_each_stdout_and_stderr_write_but_not_the_result():
    # C16: what the cell writes is also streamed; its result record is not output.
    cap = OutputCapture(max_bytes=8)
    seen = []
    cap.live = lambda stream, text, size: seen.append((stream, text, size))
    cap.write("stdout", "héllo")
    cap.write("result", "42")
    cap.write("stderr", "past the limit")  # the live copy is taken before the record's limits
    assert seen == [("stdout", "héllo", 6), ("stderr", "past the limit", 14)]


def test_capture_stream_buffer_decodes_utf8_across_writes():
    cap = OutputCapture()
    stream = CaptureStream("stdout", lambda: cap, io.StringIO())
    assert stream.buffer.writable()
    data = "€!".encode("utf-8")
    stream.buffer.write(data[:1])
    stream.buffer.write(data[1:])
    assert cap.records == [{"stream": "stdout", "text": "€!"}]


def test_capture_stream_end_cell_gives_an_unfinished_sequence_to_the_cell_that_wrote_it():
    first, second = OutputCapture(), OutputCapture()
    target = {"capture": first}
    stream = CaptureStream("stdout", lambda: target["capture"], io.StringIO())
    euro = "€".encode("utf-8")
    stream.buffer.write(b"a" + euro[:2])
    stream.end_cell()
    target["capture"] = second
    stream.buffer.write(euro[2:] + b"b")
    stream.end_cell()
    assert first.records == [{"stream": "stdout", "text": "a\ufffd"}]
    assert second.records == [{"stream": "stdout", "text": "\ufffdb"}]
    stream.end_cell()  # nothing pending: nothing written
    assert second.records == [{"stream": "stdout", "text": "\ufffdb"}]


def test_capture_stream_refuses_bytes_on_the_text_side():
    stream = CaptureStream("stdout", lambda: OutputCapture(), io.StringIO())
    try:
        stream.write(b"x")  # type: ignore[arg-type]
    except TypeError as error:
        assert "bytes" in str(error)
    else:
        raise AssertionError("bytes were accepted")



def test_a_thread_writing_while_a_write_is_cut_keeps_the_limit_and_the_count(monkeypatch):
    # The other thread's write lands while the cell's write is being cut at the byte limit (the
    # interpreter may switch threads there): the kept text must still fit, every byte counted once.
    from klbr.worker import capture as capture_module

    capture = OutputCapture(max_bytes=10)
    original = capture_module.cut_utf8
    other = []

    def cut_while_a_thread_writes(text: str, budget: int) -> str:
        if not other:
            other.append(threading.Thread(target=capture.write, args=("stdout", "1234")))
            other[0].start()
            other[0].join(0.5)  # returns at once unless the thread must wait for this write
        return original(text, budget)

    monkeypatch.setattr(capture_module, "cut_utf8", cut_while_a_thread_writes)
    capture.write("stdout", "abcdef")        # 6 of 10 bytes
    capture.write("stdout", "ghijklmnop")    # cut to the 4 bytes left...
    other[0].join()
    kept = sum(len(r["text"].encode("utf-8")) for r in capture.records)
    assert kept <= 10
    assert kept + capture.truncated_bytes == 6 + 10 + 4
