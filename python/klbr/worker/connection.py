"""The worker's end of the control socket: a reader thread and serialized writes on the loop.

Frames are read on a dedicated thread, not an asyncio task, because cell code runs on the loop's
thread: a cell stuck in a pure-Python loop or in ``time.sleep`` blocks the loop, and an
``interrupt`` or ``shutdown`` must still be read (and must still be able to break the cell, see
``server.py``). Each decoded, validated message is handed to the loop with
``call_soon_threadsafe``; the thread also tells the worker at once (``on_arrival``), on its own
thread, so the worker can signal a blocked cell.

Writes happen only on the loop thread, one whole frame per ``sendall``, scheduled with
``call_soon`` from wherever ``send`` is called. Nothing else writes to the socket, so frames never
interleave, and no write ever runs inside a cell's task (where a KeyboardInterrupt could cut a
frame in half).
"""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any, Callable

from klbr.envelope import EnvelopeError, make_envelope, parse_envelope
from klbr.frame import FrameDecoder, FrameError, encode_frame

__all__ = ["Connection", "ConnectionEnd"]


class ConnectionEnd:
    """Why the reader stopped: ``code`` None for a clean EOF, else the frame/envelope error code."""

    def __init__(self, code: str | None, detail: str) -> None:
        self.code = code
        self.detail = detail

    @property
    def clean(self) -> bool:
        """True for an EOF at a frame boundary."""
        return self.code is None

    def __repr__(self) -> str:
        return f"ConnectionEnd({self.code!r}, {self.detail!r})"


class Connection:
    """One connected worker socket, bound to its session and generation."""

    def __init__(self, sock: socket.socket, session_id: str, generation: str) -> None:
        self.sock = sock
        self.session_id = session_id
        self.generation = generation
        self.closed = False
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def connect(cls, path: str, session_id: str, generation: str) -> "Connection":
        """Connect to the host's socket at ``path`` (blocking)."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
        except OSError:
            sock.close()
            raise
        return cls(sock, session_id, generation)

    def encode(self, message: dict) -> bytes:
        """The complete frame for ``message`` in this connection's envelope; raises FrameError."""
        return encode_frame(make_envelope(self.session_id, self.generation, message))

    def send_now(self, frame: bytes) -> None:
        """Write ``frame`` immediately (the hello, before the loop runs)."""
        self.sock.sendall(frame)

    def send(self, frame: bytes) -> None:
        """Queue ``frame`` for writing on the loop thread, after every frame queued before it."""
        if self.closed or self._loop is None:
            return
        self._loop.call_soon(self._write, frame)

    def _write(self, frame: bytes) -> None:
        if self.closed:
            return
        try:
            self.sock.sendall(frame)
        except OSError:
            # The host is gone; the reader sees EOF and ends the worker.
            self.closed = True

    def start(
        self,
        loop: asyncio.AbstractEventLoop,
        on_message: Callable[[dict], Any],
        on_end: Callable[[ConnectionEnd], Any],
        on_arrival: Callable[[dict], Any] | None = None,
    ) -> None:
        """Start the reader thread: messages go to ``on_message`` on ``loop``, then ``on_end`` once."""
        self._loop = loop

        def deliver(callback: Callable, value: Any) -> None:
            try:
                loop.call_soon_threadsafe(callback, value)
            except RuntimeError:
                pass  # the loop is closed: the worker is exiting anyway

        def handle(message: dict) -> None:
            deliver(on_message, message)
            if on_arrival is not None:
                on_arrival(message)

        def read() -> None:
            try:
                end = self._read_frames(handle)
            except BaseException as error:  # a bug here must still end the worker, never hang it
                end = ConnectionEnd("WORKER_READER_FAILED", f"{type(error).__name__}: {error}")
            if on_arrival is not None:
                on_arrival({"kind": "<end>", "end": end})
            deliver(on_end, end)

        self._thread = threading.Thread(target=read, name="klbr-reader", daemon=True)
        self._thread.start()

    def _read_frames(self, handle: Callable[[dict], Any]) -> ConnectionEnd:
        decoder = FrameDecoder()
        while True:
            try:
                data = self.sock.recv(1 << 16)
            except InterruptedError:
                continue
            except OSError as error:
                return ConnectionEnd(None, f"socket closed: {error}")
            if not data:
                try:
                    decoder.eof()
                except FrameError as error:
                    return ConnectionEnd(error.code, str(error))
                return ConnectionEnd(None, "the host closed the socket")
            try:
                values = decoder.feed(data)
                for value in values:
                    envelope = parse_envelope(value, self.session_id, self.generation)
                    handle(envelope["message"])
            except (FrameError, EnvelopeError) as error:
                return ConnectionEnd(error.code, str(error))

    def close(self) -> None:
        """Stop writing and close the socket (the reader thread then ends)."""
        self.closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

