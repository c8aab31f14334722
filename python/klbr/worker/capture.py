"""Bounded cell output (C7): coalesced records, byte and record limits, exact ``truncated_bytes``.

The kept output is always an exact prefix of what the cell wrote: once one write is cut (the
record limit or the byte budget is reached), every later write of that cell is only counted.
Counting never copies a large string whole, so a 200 MiB print costs no extra memory.

Text with lone surrogates (which the wire cannot carry, C1) has each of them replaced by U+FFFD
before it is kept or counted.
"""

from __future__ import annotations

import codecs
import io
import threading
from typing import Any, Callable

__all__ = [
    "MAX_OUTPUT_RECORDS",
    "MAX_OUTPUT_TEXT_BYTES",
    "CaptureStream",
    "OutputCapture",
    "clean_text",
    "cut_utf8",
    "utf8_length",
]

#: At most this many output records per cell (C7).
MAX_OUTPUT_RECORDS = 256
#: At most this many UTF-8 bytes of output text per cell, across all records (C7).
MAX_OUTPUT_TEXT_BYTES = 65_536

_CHUNK = 1 << 20


def clean_text(text: str) -> str:
    """Return ``text`` with every lone surrogate replaced by U+FFFD (pairs are joined)."""
    return _measure(text)[0]


def utf8_length(text: str) -> int:
    """UTF-8 byte length of ``text`` (lone surrogates counted as U+FFFD), 1 MiB at a time."""
    return _measure(text)[1]


def _measure(text: str) -> tuple[str, int]:
    if text.isascii():
        return text, len(text)
    try:
        return text, sum(len(text[i : i + _CHUNK].encode("utf-8")) for i in range(0, len(text), _CHUNK))
    except UnicodeEncodeError:
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return text, sum(len(text[i : i + _CHUNK].encode("utf-8")) for i in range(0, len(text), _CHUNK))


def cut_utf8(text: str, budget: int) -> str:
    """The longest prefix of surrogate-free ``text`` whose UTF-8 form fits in ``budget`` bytes."""
    if budget <= 0:
        return ""
    head = text[:budget]
    if head.isascii():
        return head
    # A prefix of `budget` characters has at least `budget` bytes; cutting its bytes can only
    # split the last character, which "ignore" then drops.
    return head.encode("utf-8")[:budget].decode("utf-8", "ignore")


class OutputCapture:
    """Collects one cell's records; ``records`` and ``truncated_bytes`` are the wire fields."""

    def __init__(
        self, max_records: int = MAX_OUTPUT_RECORDS, max_bytes: int = MAX_OUTPUT_TEXT_BYTES
    ) -> None:
        self.max_records = max_records
        self.max_bytes = max_bytes
        self._parts: list[list[Any]] = []  # [stream, [text, ...]]
        self.used_bytes = 0
        self.truncated_bytes = 0
        self.full = False
        # Threads write to the running cell's capture too; the interpreter may switch threads in
        # the middle of a write (while it is being cut), and two writes sized against the same
        # room would pass the byte limit. SIGINT never raises in here (worker code), so the lock
        # is never left held.
        self._lock = threading.Lock()
        #: With live output (C16): called with each stdout/stderr write as kept here before the
        #: limits (``live(stream, text, size)``), after the record is made.
        self.live: Callable[[str, str, int], None] | None = None

    def write(self, stream: str, text: str) -> None:
        """Append ``text`` to ``stream``'s current record (or a new one), within the limits."""
        if not text:
            return
        text, size = _measure(text)
        with self._lock:
            self._append(stream, text, size)
        live = self.live
        if live is not None and stream != "result":
            live(stream, text, size)

    def _append(self, stream: str, text: str, size: int) -> None:
        if self.full:
            self.truncated_bytes += size
            return
        same = bool(self._parts) and self._parts[-1][0] == stream
        if not same and len(self._parts) >= self.max_records:
            self.full = True
            self.truncated_bytes += size
            return
        room = self.max_bytes - self.used_bytes
        if size <= room:
            kept, kept_size = text, size
        else:
            kept = cut_utf8(text, room)
            kept_size = utf8_length(kept)
            self.full = True
            self.truncated_bytes += size - kept_size
            if not kept:
                return
        if same:
            self._parts[-1][1].append(kept)
        else:
            self._parts.append([stream, [kept]])
        self.used_bytes += kept_size

    def add_truncated(self, count: int) -> None:
        """Count ``count`` bytes cut elsewhere (the error text) in ``truncated_bytes``."""
        with self._lock:
            self.truncated_bytes += count

    @property
    def records(self) -> list[dict[str, str]]:
        """The output records in wire form: ``[{"stream": ..., "text": ...}, ...]``."""
        return [{"stream": stream, "text": "".join(texts)} for stream, texts in self._parts]


class _BinaryAdapter(io.RawIOBase):
    """``sys.stdout.buffer`` for captured streams: bytes are decoded as UTF-8 (invalid -> U+FFFD)."""

    def __init__(self, owner: "CaptureStream") -> None:
        super().__init__()
        self._owner = owner
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._written = False

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        view = memoryview(data)
        self._written = True
        self._owner.write(self._decoder.decode(bytes(view)))
        return view.nbytes

    def flush(self) -> None:
        pass

    def end_cell(self) -> None:
        """Write out a UTF-8 sequence the cell left unfinished (as U+FFFD) and start afresh.

        Without it, the first bytes the next cell writes would complete (or garble) it.
        """
        if not self._written:
            return  # most cells never touch the binary side: keep the completion path short
        self._written = False
        text = self._decoder.decode(b"", final=True)
        self._decoder.reset()
        if text:
            self._owner.write(text)


class CaptureStream(io.TextIOBase):
    """A text stream standing in for sys.stdout/sys.stderr: routes each write through ``route``.

    ``route()`` returns the OutputCapture that owns the current write, or None, in which case the
    text goes to ``fallback`` (the process's real stream, which the host drains into a tail).
    """

    def __init__(self, name: str, route: Callable[[], OutputCapture | None], fallback: Any) -> None:
        super().__init__()
        self.stream_name = name
        self._route = route
        self._fallback = fallback
        self._buffer = _BinaryAdapter(self)

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    @property
    def errors(self) -> str:  # type: ignore[override]
        return "replace"

    @property
    def buffer(self) -> _BinaryAdapter:  # type: ignore[override]
        return self._buffer

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        if self._fallback is None:
            raise io.UnsupportedOperation("fileno")
        # Code that writes to the descriptor (subprocesses, faulthandler) reaches the real stream:
        # that output is not captured; the host drains it into its diagnostic tail.
        return self._fallback.fileno()

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        capture = self._route()
        if capture is None:
            if self._fallback is None:
                return len(text)
            try:
                self._fallback.write(text)
                self._fallback.flush()
            except (OSError, ValueError, UnicodeError):
                pass
        else:
            capture.write(self.stream_name, text)
        return len(text)

    def flush(self) -> None:
        pass

    def end_cell(self) -> None:
        """Close the running cell's part of the binary side (see ``_BinaryAdapter.end_cell``)."""
        self._buffer.end_cell()
