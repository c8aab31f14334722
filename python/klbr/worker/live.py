"""Live cell output (C16): what the running cell writes, sent while it runs, paced and bounded.

Only with ``--live-output``. The completion record (C7, :mod:`.capture`) is unchanged: every
write still goes there first; this module sends a copy of the same text as ``output`` messages.

Pacing (C16): the unsent text is sent when a line ends or 50 ms after its first byte, whichever
is first, and never sooner than 50 ms after the previous message of the cell (at most 20 a
second). Unsent text is bounded: at most ``MAX_LIVE_OUTPUT_TEXT_BYTES`` (one message) in at most
``MAX_SEGMENTS`` stream runs; what does not fit is counted and reported as the next message's
``dropped_bytes``, never buffered. Unlike ipykernel's OutStream (an unbounded StringIO flushed
by its IO thread every 200 ms), a 200 MiB print therefore costs at most one message of memory.

Sending happens on a pacer thread, because a cell stuck in synchronous code blocks the loop for
as long as it likes and its output must still go out. The socket is shared with the loop thread
(:class:`~.connection.Connection` serializes whole frames under one lock). Taking the next
message and writing it happen under ``_send_lock``, which :meth:`LiveOutput.end` holds while it
sends the rest, so no ``output`` of a cell is ever written after its ``completed``.

A forked child writes nothing: after a fork the child's copy is switched off (and gets fresh
locks, since the pacer thread that may have held them does not exist there).
"""

from __future__ import annotations

import collections
import os
import threading
import time
from typing import Callable

from klbr.envelope import MAX_LIVE_OUTPUT_TEXT_BYTES

from .capture import cut_utf8, utf8_length

__all__ = ["MAX_SEGMENTS", "MIN_INTERVAL", "LINGER", "LiveOutput"]

#: Seconds after its first unsent byte that text without a line end is sent anyway.
LINGER = 0.05
#: Seconds between two messages of one cell, at least (so at most 20 a second).
MIN_INTERVAL = 0.05
#: Stream runs (stdout, then stderr, ...) waiting at most; a write that would start another is dropped.
MAX_SEGMENTS = 4

Encode = Callable[[str, int, str, str, int], bytes]
Send = Callable[[bytes], None]


class _Segment:
    """A run of unsent text of one stream."""

    __slots__ = ("stream", "texts", "size", "since", "line_end")

    def __init__(self, stream: str, text: str, size: int, since: float) -> None:
        self.stream = stream
        self.texts = [text]
        self.size = size
        self.since = since
        self.line_end = "\n" in text


class LiveOutput:
    """One worker's live output: the running cell's unsent text, its pacer thread, its sends.

    ``encode(id, seq, stream, text, dropped_bytes)`` builds an ``output`` frame; ``send(frame)``
    writes one whole frame from any thread. ``begin``/``end`` run on the loop thread around a
    cell; ``write`` runs on whichever thread the cell wrote from.
    """

    def __init__(self, encode: Encode, send: Send, clock: Callable[[], float] = time.monotonic) -> None:
        self._encode = encode
        self._send = send
        self._clock = clock
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._send_lock = threading.Lock()
        self._op: str | None = None
        self._seq = 0
        self._segments: collections.deque[_Segment] = collections.deque()
        self._pending = 0
        self._dropped = 0
        self._last_sent = float("-inf")
        self._thread: threading.Thread | None = None
        self._off = False
        os.register_at_fork(after_in_child=self._after_fork_in_child)

    # -- the loop thread ----------------------------------------------------------------

    def begin(self, operation_id: str) -> None:
        """Start streaming the cell ``operation_id`` (its seq counts from 0)."""
        with self._lock:
            self._op = operation_id
            self._seq = 0
            self._dropped = 0
            self._last_sent = float("-inf")

    def end(self) -> None:
        """Send what the cell left unsent, paced, then stop: call before its ``completed``."""
        if self._op is None:
            return
        with self._send_lock:
            with self._lock:
                operation_id, self._op = self._op, None  # later writes (a thread's) are not this cell's
                segments = list(self._segments)
                self._segments.clear()
                self._pending = 0
                dropped, self._dropped = self._dropped, 0
            for segment in segments:
                wait = self._last_sent + MIN_INTERVAL - self._clock()
                if wait > 0:
                    time.sleep(wait)
                self._emit(operation_id, segment, dropped)
                dropped = 0

    def flush(self) -> None:
        """Send the running cell's queued output now, unpaced: a display follows it (C20 order).

        At most 32 displays per cell, so this bounds the message rate as the pacer does.
        """
        with self._send_lock:
            with self._lock:
                if self._op is None or not self._segments:
                    return
                operation_id = self._op
                segments = list(self._segments)
                self._segments.clear()
                self._pending = 0
                dropped, self._dropped = self._dropped, 0
            for segment in segments:
                self._emit(operation_id, segment, dropped)
                dropped = 0

    # -- any thread the cell writes from ----------------------------------------------------

    def write(self, stream: str, text: str, size: int) -> None:
        """Queue ``text`` (surrogate-free, ``size`` UTF-8 bytes) of ``stream`` for sending."""
        with self._lock:
            if self._op is None or self._off:
                return
            if self._dropped:
                # Once a write did not fit, the rest waits for the next message: each message's
                # text is then one unbroken piece of what was written, its dropped_bytes after it.
                self._dropped += size
                return
            segments = self._segments
            last = segments[-1] if segments else None
            if last is not None and last.stream != stream and len(segments) >= MAX_SEGMENTS:
                self._dropped += size
                self._wake.notify()
                return
            room = MAX_LIVE_OUTPUT_TEXT_BYTES - self._pending
            if size <= room:
                kept, kept_size = text, size
            else:
                kept = cut_utf8(text, room)
                kept_size = utf8_length(kept)
                self._dropped += size - kept_size
                if not kept:
                    self._wake.notify()
                    return
            if last is not None and last.stream == stream:
                last.texts.append(kept)
                last.size += kept_size
                wake = kept_size < size or (not last.line_end and "\n" in kept)
                last.line_end = last.line_end or "\n" in kept
            else:
                segments.append(_Segment(stream, kept, kept_size, self._clock()))
                wake = True
            self._pending += kept_size
            if wake:
                if self._thread is None:
                    self._start_pacer()
                self._wake.notify()

    # -- the pacer thread ---------------------------------------------------------------

    def _start_pacer(self) -> None:
        self._thread = threading.Thread(target=self._pace, name="klbr-live-output", daemon=True)
        self._thread.start()

    def _due(self) -> float:
        """When the first unsent segment may go (lock held, segments not empty)."""
        first = self._segments[0]
        ready = len(self._segments) > 1 or first.line_end or self._dropped > 0
        due = self._last_sent + MIN_INTERVAL
        return due if ready else max(due, first.since + LINGER)

    def _pace(self) -> None:
        while True:
            with self._wake:
                while True:
                    if self._segments and self._op is not None:
                        delay = self._due() - self._clock()
                        if delay <= 0:
                            break
                        self._wake.wait(delay)
                    else:
                        self._wake.wait()
            self._send_first()

    def _send_first(self) -> None:
        with self._send_lock:
            with self._lock:
                if not self._segments or self._op is None:
                    return  # end() took it first
                segment = self._segments.popleft()
                self._pending -= segment.size
                dropped, self._dropped = self._dropped, 0
                operation_id = self._op
            self._emit(operation_id, segment, dropped)

    def _emit(self, operation_id: str, segment: _Segment, dropped: int) -> None:
        """Write one message (``_send_lock`` held): seq and the send time move together."""
        seq = self._seq
        self._seq = seq + 1
        self._last_sent = self._clock()
        text = segment.texts[0] if len(segment.texts) == 1 else "".join(segment.texts)
        self._send(self._encode(operation_id, seq, segment.stream, text, dropped))

    def _after_fork_in_child(self) -> None:
        # The child's copy never sends (only the worker's pid writes frames) and must not wait
        # on a lock the parent's pacer thread held at the fork.
        self._off = True
        self._op = None
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._send_lock = threading.Lock()
        self._thread = None
