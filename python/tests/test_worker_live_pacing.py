"""klbr.worker.live's pacing rules (C16) on a fake clock: when the first unsent text is due.

A line end (or a second stream run, or dropped bytes) makes text due at once, no sooner than
50 ms after the previous message; text without a line end waits 50 ms after its first byte.
end() sends what is left at the same pace. No thread and no real time: the pacer's own waits are
what _due() says, and end() sleeps through time.sleep, replaced here.
"""

from __future__ import annotations

import klbr.worker.live as live_module
from klbr.worker.capture import utf8_length
from klbr.worker.live import LINGER, MIN_INTERVAL, LiveOutput


class Clock:
    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Quiet(LiveOutput):
    """A LiveOutput whose pacer thread never starts: the tests read _due() and call _send_first()."""

    def _start_pacer(self) -> None:
        self._thread = object()  # type: ignore[assignment]


def live(clock: Clock) -> tuple[Quiet, list[tuple]]:
    sent: list[tuple] = []
    out = Quiet(lambda *message: message, sent.append, clock=clock)
    out.begin("op-1")
    return out, sent


def write(out: LiveOutput, stream: str, text: str) -> None:
    out.write(stream, text, utf8_length(text))


def test_the_spec_numbers():
    # C16: 50 ms after the first unsent byte; at most 20 messages a second.
    assert LINGER == 0.05
    assert MIN_INTERVAL == 0.05


def test_text_without_a_line_end_is_due_50_ms_after_its_first_byte():
    clock = Clock(100.0)
    out, _ = live(clock)
    write(out, "stdout", "partial")
    clock.now = 100.02
    write(out, "stdout", " more")  # a later byte does not move the deadline
    assert out._due() == 100.0 + 0.05


def test_a_line_end_is_due_at_once_the_first_time():
    clock = Clock(100.0)
    out, _ = live(clock)
    write(out, "stdout", "line\n")
    assert out._due() <= clock.now


def test_a_line_end_in_a_later_write_makes_the_run_due():
    clock = Clock(100.0)
    out, _ = live(clock)
    write(out, "stdout", "a")
    assert out._due() == 100.05
    write(out, "stdout", "b\nc")
    assert out._due() <= clock.now


def test_a_second_stream_run_or_dropped_bytes_make_the_first_due():
    clock = Clock(100.0)
    out, _ = live(clock)
    write(out, "stdout", "a")
    write(out, "stderr", "b")
    assert out._due() <= clock.now
    out2, _ = live(clock)
    write(out2, "stdout", "x" * 20_000)  # past one message: the rest is dropped and counted
    assert out2._dropped > 0
    assert out2._due() <= clock.now


def test_no_message_sooner_than_50_ms_after_the_previous_one():
    clock = Clock(100.0)
    out, sent = live(clock)
    write(out, "stdout", "one\n")
    out._send_first()
    assert sent == [("op-1", 0, "stdout", "one\n", 0)]
    clock.now = 100.01
    write(out, "stdout", "two\n")
    assert out._due() == 100.0 + 0.05
    # Text without a line end after a message: the later of its linger and the interval.
    out._send_first()
    clock.now = 100.2
    write(out, "stdout", "three")
    assert out._due() == 100.2 + 0.05


def test_seq_counts_from_zero_per_cell_and_each_message_moves_it():
    clock = Clock(100.0)
    out, sent = live(clock)
    for text in ("a\n", "b\n", "c\n"):
        write(out, "stdout", text)
        out._send_first()
    out.end()
    out.begin("op-2")
    write(out, "stderr", "d\n")
    out._send_first()
    assert [(m[0], m[1]) for m in sent] == [("op-1", 0), ("op-1", 1), ("op-1", 2), ("op-2", 0)]


def test_end_sends_the_rest_paced(monkeypatch):
    clock = Clock(100.0)
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(round(seconds, 6))
        clock.now += seconds

    monkeypatch.setattr(live_module.time, "sleep", sleep)
    out, sent = live(clock)
    write(out, "stdout", "a")
    write(out, "stderr", "b")
    write(out, "stdout", "c")
    out.end()
    assert [m[3] for m in sent] == ["a", "b", "c"]
    # The first at once (nothing sent before), each next one 50 ms after the previous.
    assert slept == [0.05, 0.05]


def test_flush_sends_at_once_unpaced_and_nothing_when_empty(monkeypatch):
    from klbr.envelope import MAX_LIVE_OUTPUT_TEXT_BYTES

    clock = Clock(100.0)
    monkeypatch.setattr(live_module.time, "sleep", lambda s: (_ for _ in ()).throw(AssertionError("flush slept")))
    out, sent = live(clock)
    out.flush()
    assert sent == []
    write(out, "stdout", "a" * (MAX_LIVE_OUTPUT_TEXT_BYTES - 1))
    write(out, "stderr", "bb")  # one byte of it fits
    out.flush()
    # The dropped byte is reported once, with the first message of the flush.
    assert sent == [("op-1", 0, "stdout", "a" * (MAX_LIVE_OUTPUT_TEXT_BYTES - 1), 1), ("op-1", 1, "stderr", "b", 0)]
    assert out._pending == 0
    out.flush()
    assert len(sent) == 2
    # After a flush the count starts afresh: the next write is kept, not counted as dropped.
    write(out, "stdout", "after\n")
    out.flush()
    assert sent[-1] == ("op-1", 2, "stdout", "after\n", 0)


def test_the_bound_counts_what_is_unsent_not_what_was_sent():
    from klbr.envelope import MAX_LIVE_OUTPUT_TEXT_BYTES

    clock = Clock(100.0)
    out, sent = live(clock)
    write(out, "stdout", "x" * (MAX_LIVE_OUTPUT_TEXT_BYTES - 1) + "\n")
    out._send_first()
    assert out._pending == 0
    write(out, "stdout", "y" * 100 + "\n")
    out._send_first()
    assert sent[1][3] == "y" * 100 + "\n"
    assert sent[1][4] == 0


def test_what_is_unsent_counts_against_the_bound_across_writes():
    from klbr.envelope import MAX_LIVE_OUTPUT_TEXT_BYTES

    clock = Clock(100.0)
    out, sent = live(clock)
    write(out, "stdout", "a" * 16_000)
    write(out, "stdout", "b" * 1_000)  # only what is left of one message fits
    assert out._pending == MAX_LIVE_OUTPUT_TEXT_BYTES
    assert out._dropped == 16_000 + 1_000 - MAX_LIVE_OUTPUT_TEXT_BYTES
    out._send_first()
    assert sent[0][3] == "a" * 16_000 + "b" * (MAX_LIVE_OUTPUT_TEXT_BYTES - 16_000)
    assert out._pending == 0


def test_a_run_of_several_writes_gives_back_all_its_bytes_when_sent():
    clock = Clock(100.0)
    out, _ = live(clock)
    write(out, "stdout", "a" * 5_000)
    write(out, "stdout", "b" * 5_000 + "\n")
    out._send_first()
    assert out._pending == 0


def test_the_next_cell_has_the_whole_bound(monkeypatch):
    from klbr.envelope import MAX_LIVE_OUTPUT_TEXT_BYTES

    monkeypatch.setattr(live_module.time, "sleep", lambda s: None)
    clock = Clock(100.0)
    out, sent = live(clock)
    write(out, "stdout", "x" * 100)
    out.end()
    out.begin("op-2")
    write(out, "stdout", "y" * MAX_LIVE_OUTPUT_TEXT_BYTES)
    out.end()
    assert sent[-1] == ("op-2", 0, "stdout", "y" * MAX_LIVE_OUTPUT_TEXT_BYTES, 0)
