"""klbr.worker.live.LiveOutput's buffering, without its pacer thread (end() sends what is left).

The pacing itself (line end, linger, 20 a second) is exercised with a real worker in
test_worker_live_output.py; here the pacer is not started, so every case is deterministic.
"""

from __future__ import annotations

import os

from klbr.envelope import MAX_LIVE_OUTPUT_TEXT_BYTES
from klbr.worker.capture import utf8_length
from klbr.worker.live import MAX_SEGMENTS, LiveOutput


class Quiet(LiveOutput):
    """A LiveOutput whose messages are only sent by end()."""

    def _start_pacer(self) -> None:
        self._thread = object()  # type: ignore[assignment]


def messages(writes: list[tuple[str, str]], operation: str = "op-1") -> list[tuple]:
    sent: list[tuple] = []
    live = Quiet(lambda *message: message, sent.append, clock=lambda: 0.0)
    live._last_sent = float("-inf")
    live.begin(operation)
    for stream, text in writes:
        live.write(stream, text, utf8_length(text))
    live._last_sent = float("-inf")  # end() waits 50 ms between messages: not in a unit test
    end_clock = iter(range(1000, 2000))
    live._clock = lambda: float(next(end_clock))
    live.end()
    return sent


def test_nothing_written_sends_nothing():
    assert messages([]) == []


def test_consecutive_writes_of_one_stream_are_one_message_and_streams_keep_order():
    sent = messages([("stdout", "a"), ("stdout", "b\n"), ("stderr", "e"), ("stdout", "c")])
    assert sent == [
        ("op-1", 0, "stdout", "ab\n", 0),
        ("op-1", 1, "stderr", "e", 0),
        ("op-1", 2, "stdout", "c", 0),
    ]


def test_unsent_text_is_bounded_and_the_rest_is_counted_after_the_text_it_follows():
    sent = messages([("stdout", "x" * 20_000), ("stdout", "tail\n"), ("stderr", "err")])
    assert sent == [("op-1", 0, "stdout", "x" * MAX_LIVE_OUTPUT_TEXT_BYTES, 20_000 - MAX_LIVE_OUTPUT_TEXT_BYTES + 5 + 3)]


def test_text_is_cut_on_a_character_boundary():
    sent = messages([("stdout", "€" * 6000)])
    text = sent[0][3]
    assert text == "€" * (MAX_LIVE_OUTPUT_TEXT_BYTES // 3)
    assert len(text.encode()) + sent[0][4] == 18_000


def test_a_write_that_would_start_one_segment_too_many_is_dropped():
    writes = [("stdout" if i % 2 == 0 else "stderr", str(i)) for i in range(MAX_SEGMENTS + 2)]
    sent = messages(writes)
    assert [m[3] for m in sent] == [str(i) for i in range(MAX_SEGMENTS)]
    assert sent[0][4] == 2  # the two dropped one-byte writes, reported with the next message


def test_after_end_writes_are_ignored_and_the_next_cell_counts_from_zero():
    sent: list[tuple] = []
    live = Quiet(lambda *message: message, sent.append)
    live.begin("a")
    live.write("stdout", "1", 1)
    live.end()
    live.write("stdout", "late", 4)  # a thread of the ended cell
    live.begin("b")
    live.write("stdout", "2", 1)
    live.end()
    assert sent == [("a", 0, "stdout", "1", 0), ("b", 0, "stdout", "2", 0)]


def test_a_forked_child_is_switched_off():
    sent: list[tuple] = []
    live = Quiet(lambda *message: message, sent.append)
    live.begin("a")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its copy must neither buffer nor send, even for a cell it begins
        live.write("stdout", "from the child", 14)
        live.end()
        live.begin("in-the-child")
        live.write("stdout", "still the child", 15)
        live.flush()
        live.end()
        os.write(write, b"1" if not sent and not live._segments else b"0")
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 1) == b"1"
    os.close(read)
    os.close(write)
    live.write("stdout", "parent", 6)
    live.end()
    assert sent == [("a", 0, "stdout", "parent", 0)]
