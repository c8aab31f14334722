"""klbr.worker.live's pacer thread (C16) on the real clock, without a worker process.

test_worker_live.py and test_worker_live_pacing.py never start the thread; here it runs and the
rules are checked as bounds on the times it sent at: a line end goes out without waiting for
end(), text without one no sooner than 50 ms after its first byte, two messages of a cell no
closer than 50 ms. Upper bounds are generous waits (a loaded machine), lower bounds are the rule.
Where a rule says "at once", the linger is made far longer than the wait (``slow_linger``): text
that went out anyway was sent for its line end (or its dropped bytes), not for its age.
"""

from __future__ import annotations

import threading
import time

import pytest

import klbr.worker.live as live_module
from klbr.worker.capture import utf8_length
from klbr.worker.live import LINGER, MIN_INTERVAL, LiveOutput

#: How long a message may take to come on a busy machine (the rule is 50 ms).
PATIENCE = 5.0
#: Timer slack: a Condition.wait(d) may return up to a clock tick early on some systems.
SLACK = 0.002


@pytest.fixture
def slow_linger(monkeypatch):
    """Text without a line end would wait 60 s: longer than any wait here."""
    monkeypatch.setattr(live_module, "LINGER", 60.0)


class Recorder:
    """The send side: each message with the monotonic time it was written at."""

    def __init__(self) -> None:
        self.sent: list[tuple[float, tuple]] = []
        self._arrived = threading.Condition()

    def __call__(self, frame: tuple) -> None:
        with self._arrived:
            self.sent.append((time.monotonic(), frame))
            self._arrived.notify_all()

    def wait_for(self, count: int, timeout: float = PATIENCE) -> bool:
        with self._arrived:
            return self._arrived.wait_for(lambda: len(self.sent) >= count, timeout)

    @property
    def frames(self) -> list[tuple]:
        return [frame for _, frame in self.sent]


def started(operation: str = "op-1") -> tuple[LiveOutput, Recorder]:
    recorder = Recorder()
    live = LiveOutput(lambda *message: message, recorder)
    live.begin(operation)
    return live, recorder


def write(live: LiveOutput, stream: str, text: str) -> None:
    live.write(stream, text, utf8_length(text))


def test_a_line_goes_out_while_the_cell_runs_without_end(slow_linger):
    live, recorder = started()
    write(live, "stdout", "first line\n")
    assert recorder.wait_for(1)
    assert recorder.frames == [("op-1", 0, "stdout", "first line\n", 0)]
    live.end()
    assert len(recorder.sent) == 1


def test_text_without_a_line_end_goes_out_alone_no_sooner_than_50_ms_after_its_first_byte():
    live, recorder = started()
    before = time.monotonic()
    write(live, "stdout", "partial")
    assert recorder.wait_for(1)
    at, frame = recorder.sent[0]
    assert frame == ("op-1", 0, "stdout", "partial", 0)
    assert at - before >= LINGER - SLACK
    live.end()


def test_a_later_line_end_makes_waiting_text_go_before_its_linger(slow_linger):
    live, recorder = started()
    write(live, "stdout", "a")
    time.sleep(0.01)  # the pacer is waiting for the linger now (or soon: either way it must be woken)
    write(live, "stdout", "b\n")
    assert recorder.wait_for(1)
    assert recorder.frames == [("op-1", 0, "stdout", "ab\n", 0)]
    live.end()


def test_a_second_stream_run_makes_the_first_go_before_its_linger(slow_linger):
    live, recorder = started()
    write(live, "stdout", "a")
    write(live, "stderr", "b")
    assert recorder.wait_for(1)
    assert recorder.frames == [("op-1", 0, "stdout", "a", 0)]
    live.end()


def test_two_messages_of_a_cell_are_at_least_50_ms_apart_and_numbered_in_order(slow_linger):
    live, recorder = started()
    write(live, "stdout", "one\n")
    assert recorder.wait_for(1)
    write(live, "stdout", "two\n")
    write(live, "stderr", "three\n")
    assert recorder.wait_for(3)
    live.end()
    assert recorder.frames == [
        ("op-1", 0, "stdout", "one\n", 0),
        ("op-1", 1, "stdout", "two\n", 0),
        ("op-1", 2, "stderr", "three\n", 0),
    ]
    times = [at for at, _ in recorder.sent]
    assert all(later - earlier >= MIN_INTERVAL - SLACK for earlier, later in zip(times, times[1:]))


def test_a_write_from_another_thread_is_sent_by_the_pacer_while_the_loop_thread_is_blocked(slow_linger):
    live, recorder = started()
    writer = threading.Thread(target=write, args=(live, "stderr", "from a thread\n"))
    writer.start()
    writer.join()
    # The loop thread does nothing here: only the pacer can send it.
    assert recorder.wait_for(1)
    assert recorder.frames == [("op-1", 0, "stderr", "from a thread\n", 0)]
    live.end()


def test_dropped_bytes_make_the_kept_text_go_at_once_and_are_reported_with_it(slow_linger):
    from klbr.envelope import MAX_LIVE_OUTPUT_TEXT_BYTES

    live, recorder = started()
    # One byte dropped is enough.
    write(live, "stdout", "x" * (MAX_LIVE_OUTPUT_TEXT_BYTES + 1))
    assert recorder.wait_for(1)
    assert recorder.frames == [("op-1", 0, "stdout", "x" * MAX_LIVE_OUTPUT_TEXT_BYTES, 1)]
    # The next message carries no count of its own.
    write(live, "stdout", "next\n")
    assert recorder.wait_for(2)
    assert recorder.frames[1] == ("op-1", 1, "stdout", "next\n", 0)
    live.end()


def test_after_end_the_pacer_sends_nothing_for_the_ended_cell_and_serves_the_next(slow_linger):
    live, recorder = started("a")
    write(live, "stdout", "a1\n")
    assert recorder.wait_for(1)
    live.end()
    write(live, "stdout", "late, from a thread of the ended cell\n")
    live.begin("b")
    write(live, "stdout", "b1\n")
    assert recorder.wait_for(2)
    live.end()
    assert recorder.frames == [("a", 0, "stdout", "a1\n", 0), ("b", 0, "stdout", "b1\n", 0)]


def test_a_pacer_that_wakes_after_flush_took_the_text_sends_nothing_and_goes_on(slow_linger):
    # flush() (a display follows) may take the text between the pacer's wake-up and its send.
    live, recorder = started()
    write(live, "stdout", "a\n")
    assert recorder.wait_for(1)
    write(live, "stdout", "b")
    live.flush()
    live._send_first()  # what the pacer does next: finds nothing to send
    write(live, "stdout", "c\n")
    assert recorder.wait_for(3)
    live.end()
    assert [frame[3] for frame in recorder.frames] == ["a\n", "b", "c\n"]
