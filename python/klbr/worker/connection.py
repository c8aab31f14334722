"""The worker's end of the control socket: reads by the loop or a reader thread, serialized writes.

Cell code runs on the loop's thread: a cell stuck in a pure-Python loop or in ``time.sleep``
blocks the loop, and an ``interrupt`` or ``shutdown`` must still be read (and must still be able
to break the cell, see ``server.py``). So the socket is read by whichever of two readers is free:

* the loop, as its select returns (:class:`~.loop.WorkerSelector` tells the connection around
  every select): an idle worker gets the host's message with one wake-up, on the thread that
  runs the cell, with no hand-off between threads;
* the reader thread, whenever the loop is out of a blocking select (running a cell, a callback,
  the worker's own code): its epoll holds the socket from the moment the loop's select returns
  (after the loop read what was there) until the loop blocks again, so a message that arrives
  while the loop is busy wakes it, and it tells the worker at once (``on_arrival``), on its own
  thread, so the worker can signal a blocked cell.

Both read under one lock, never blocking in ``recv``, and queue the messages in the order read; the
loop hands them to the worker from one ``call_soon`` (``call_soon_threadsafe`` from the thread).
A loop without the worker's selector (not CPython's selector loop) leaves all reading to the thread.

Writes happen on the loop thread, whole frames per ``sendall``, in the order they were
queued; the one exception is live output (C16), written by its pacer thread while a cell may be
blocking the loop, through :meth:`Connection.send_threadsafe`. Every ``sendall`` holds one lock,
so frames never interleave. ``send`` appends to an outbox flushed by one ``call_soon`` callback; ``send_direct``
(the worker's completions) flushes the outbox and its frame at once, in one ``sendall``, saving
two loop iterations per cell.
A write never runs while a cell's own code may be interrupted: the worker disarms its SIGINT
handler before it sends a completion (see ``server.py``), so no KeyboardInterrupt can cut a frame.

Incoming envelopes whose session and generation are the expected ones (every frame of a sane
host) are validated without building a per-call identity schema; any other value takes the
checking path, so the error reported for a bad frame is exactly the same.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import select
import selectors
import socket
import threading
from typing import Any, Callable

from klbr.envelope import (
    CELL_STATUSES,
    LIVE_OUTPUT_STREAMS,
    MAX_CELL_SOURCE_BYTES,
    MAX_DISPLAYS_PER_CELL,
    MAX_ERROR_BYTES,
    MAX_LIVE_OUTPUT_TEXT_BYTES,
    MAX_OUTPUT_RECORDS,
    MAX_OUTPUT_TEXT_BYTES,
    OUTPUT_STREAMS,
    PROTOCOL_VERSION,
    EnvelopeError,
    is_identifier,
    make_envelope,
    parse_envelope,
)
from klbr.frame import HEADER_BYTES, MAX_FRAME_BYTES, MAX_SAFE_INTEGER, FrameDecoder, FrameError, encode_frame

from .doorbell import Doorbell
from .loop import WorkerSelector
from .plain import PlainReader

__all__ = ["Connection", "ConnectionEnd"]


# The exact json.dumps options of klbr.frame.encode_payload (so the bytes are the same).
_JSON = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"), check_circular=False).encode
# What _JSON gives for a str (JSONEncoder.encode returns encode_basestring(o) for one).
_STRING = json.encoder.encode_basestring


#: This process's pid, kept by an at-fork hook: the select hooks run on every loop iteration, and a
#: forked child (whose copy of the loop may run on) must not touch the parent's reader.
_pid = os.getpid()


def _forked() -> None:
    global _pid
    _pid = os.getpid()


os.register_at_fork(after_in_child=_forked)


def _text_bytes(text: Any) -> int:
    """UTF-8 length of ``text``; -1 when it is not a str or holds a lone surrogate."""
    if type(text) is not str:
        return -1
    if text.isascii():
        return len(text)
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return -1


def _plain_cell_result(status: Any, output: Any, truncated_bytes: Any, error: Any) -> bool:
    """Whether the envelope schema and the frame encoder accept this cell result as it is."""
    if status not in CELL_STATUSES or type(output) is not list or len(output) > MAX_OUTPUT_RECORDS:
        return False
    if type(truncated_bytes) is not int or not 0 <= truncated_bytes <= MAX_SAFE_INTEGER:
        return False
    if error is not None and not 0 <= _text_bytes(error) <= MAX_ERROR_BYTES:
        return False
    total = 0
    for record in output:
        if type(record) is not dict or len(record) != 2 or record.get("stream") not in OUTPUT_STREAMS:
            return False
        size = _text_bytes(record.get("text"))
        if size < 0:
            return False
        total += size
    return total <= MAX_OUTPUT_TEXT_BYTES


def _plain_message(value: Any, session: str, generation: str) -> dict | None:
    """The message of an ``execute`` or ``interrupt`` envelope the schema certainly accepts, else None.

    Exactly what ``parse_envelope(value)["message"]`` gives for it (the same fields; ``value`` is
    the decoder's own fresh value, so it is handed out rather than copied). Everything else,
    valid or not, takes the schema's path, which also reports the precise error.
    """
    if type(value) is not dict or len(value) != 4:
        return None
    version = value.get("version")
    message = value.get("message")
    if (
        type(version) is not int
        or version != PROTOCOL_VERSION
        or value.get("session_id") != session
        or value.get("generation") != generation
        or type(message) is not dict
    ):
        return None
    kind = message.get("kind")
    if kind == "execute":
        code = message.get("code")
        if (
            len(message) == 3
            and type(code) is str
            and len(code) * 4 <= MAX_CELL_SOURCE_BYTES
            and is_identifier(message.get("id"))
        ):
            return message
    elif kind == "interrupt":
        if len(message) == 2 and is_identifier(message.get("id")):
            return message
    return None


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
        self.closed = False
        #: Only the process that connected writes: a child a cell forked shares the socket, and a
        #: frame from it would be a second, foreign completion (see :meth:`_write`).
        self.pid = os.getpid()
        #: Called (loop thread) once when a write fails: the connection can no longer carry a
        #: completion, so the worker must end rather than run on unheard.
        self.on_broken: Callable[[OSError], Any] | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_message: Callable[[dict], Any] = lambda message: None
        self._on_end: Callable[[ConnectionEnd], Any] = lambda end: None
        self._on_arrival: Callable[[dict], Any] | None = None
        self._fd = -1
        # Reading: whoever reads (the loop, or the reader thread while the loop is busy) holds
        # _read_lock from recv to queueing, so messages reach the inbox, and the loop, in order.
        self._read_lock = threading.Lock()
        self._decoder = FrameDecoder()
        self._inbox: collections.deque[Any] = collections.deque()
        self._ended = False
        #: The reader thread's epoll (made by start): it holds the socket while the loop is out of a
        #: blocking select.
        self._watcher: Any = None
        self._watching = False
        self._selector: WorkerSelector | None = None
        #: The loop's ready queue and one handle of _drain for it (see start), when the loop has one.
        self._ready_queue: collections.deque | None = None
        self._drain_handle: asyncio.Handle | None = None
        #: Called by the reader thread before each wait: returns the seconds it may wait at most
        #: (None: until a message). The worker retries a kick there (see server.py).
        self.reader_tick: Callable[[], float | None] | None = None
        self._outbox: list[bytes] = []
        # Held for each whole sendall: the loop thread and the live output pacer both write.
        self._write_lock = threading.Lock()
        self._broken: OSError | None = None
        #: The kernel's signal to the main thread on arrival while an operation's code runs (doorbell.py).
        self.doorbell: Doorbell | None = None
        self.bind(session_id, generation)

    def bind(self, session_id: str, generation: str) -> None:
        """Name the session and generation of every envelope from now on.

        A warm spare (C19) is connected and serving before it knows them: it binds them once, before
        its hello, while the host has sent nothing yet (the host writes only after the hello).
        """
        self.session_id = session_id
        self.generation = generation
        # The envelope fields the fast completion path writes without validating them.
        self._plain_identity = (
            type(session_id) is str
            and type(generation) is str
            and is_identifier(session_id)
            and is_identifier(generation)
        )
        self._completed_head = (
            f'{{"version":{PROTOCOL_VERSION},"session_id":{_JSON(session_id)},"generation":{_JSON(generation)},'
            '"message":{"kind":"completed","id":"'
            if self._plain_identity
            else ""
        )
        self._output_head = self._completed_head.replace('"kind":"completed"', '"kind":"output"')
        self._display_head = self._completed_head.replace('"kind":"completed"', '"kind":"display"')
        #: Reads the host's plain execute/interrupt frames without the general decoder (plain.py).
        self._plain_reader = PlainReader(_JSON(session_id), _JSON(generation)) if self._plain_identity else None

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

    def encode_cell_completion(
        self,
        operation_id: str,
        status: str,
        output: list,
        truncated_bytes: int,
        error: str | None,
        displays_dropped: int | None = None,
    ) -> bytes:
        """The frame of ``completed {kind: "cell", ...}``: the same bytes as :meth:`encode` gives.

        A result the schema certainly accepts (the worker's own, always) is serialized directly,
        skipping the validated copy and the encoder's type walk; anything else goes through
        :meth:`encode` and raises exactly what it raises.
        """
        dropped = "" if displays_dropped is None else f',"displays_dropped":{displays_dropped}'
        if (
            self._plain_identity
            and is_identifier(operation_id)
            and _plain_cell_result(status, output, truncated_bytes, error)
            and (displays_dropped is None or type(displays_dropped) is int and 0 <= displays_dropped <= MAX_SAFE_INTEGER)
        ):
            # The validated copy's field order; ids, statuses and ints need no JSON escaping.
            if not output:
                records = "[]"
            elif len(output) == 1:
                record = output[0]
                records = f'[{{"stream":"{record["stream"]}","text":{_STRING(record["text"])}}}]'
            else:
                records = _JSON([{"stream": r["stream"], "text": r["text"]} for r in output])
            payload = (
                f'{self._completed_head}{operation_id}","result":{{"kind":"cell","status":"{status}",'
                f'"output":{records},"truncated_bytes":{truncated_bytes},'
                f'"error":{"null" if error is None else _JSON(error)}{dropped}}}}}}}'
            ).encode("utf-8")
            if len(payload) <= MAX_FRAME_BYTES:
                return len(payload).to_bytes(HEADER_BYTES, "big") + payload
        result = {
            "kind": "cell", "status": status, "output": output, "truncated_bytes": truncated_bytes, "error": error,
        }
        if displays_dropped is not None:
            result["displays_dropped"] = displays_dropped
        return self.encode({"kind": "completed", "id": operation_id, "result": result})

    def encode_output(self, operation_id: str, seq: int, stream: str, text: str, dropped_bytes: int) -> bytes:
        """The frame of ``output`` (C16): the same bytes as :meth:`encode` gives for the message.

        The worker's own messages (an identifier, ints, a stream name, non-empty surrogate-free
        text of at most 16 KiB, so never near the frame limit) are serialized directly; anything
        else goes through :meth:`encode` and raises what it raises.
        """
        if (
            self._plain_identity
            and is_identifier(operation_id)
            and stream in LIVE_OUTPUT_STREAMS
            and type(seq) is int
            and 0 <= seq <= MAX_SAFE_INTEGER
            and type(dropped_bytes) is int
            and 0 <= dropped_bytes <= MAX_SAFE_INTEGER
            and 0 < _text_bytes(text) <= MAX_LIVE_OUTPUT_TEXT_BYTES
        ):
            payload = (
                f'{self._output_head}{operation_id}","seq":{seq},"stream":"{stream}",'
                f'"text":{_STRING(text)},"dropped_bytes":{dropped_bytes}}}}}'
            ).encode("utf-8")
            return len(payload).to_bytes(HEADER_BYTES, "big") + payload
        message = {
            "kind": "output", "id": operation_id, "seq": seq, "stream": stream, "text": text, "dropped_bytes": dropped_bytes,
        }
        return self.encode(message)

    def encode_display(self, operation_id: str, seq: int, data: dict, metadata: dict) -> bytes:
        """The frame of ``display`` (C20): the same bytes as :meth:`encode` gives for the message.

        The worker's own bundles (an identifier, a seq, string values it checked itself) are
        serialized directly, skipping the validated copy of up to 1 MiB; anything else goes through
        :meth:`encode`. Raises FrameError (``FRAME_TOO_LARGE``) past the frame limit, either way.
        """
        if self._plain_identity and is_identifier(operation_id) and type(seq) is int and 0 <= seq < MAX_DISPLAYS_PER_CELL:
            payload = (
                f'{self._display_head}{operation_id}","seq":{seq},"data":{_JSON(data)},"metadata":{_JSON(metadata)}}}}}'
            ).encode("utf-8")
            if len(payload) > MAX_FRAME_BYTES:
                raise FrameError("FRAME_TOO_LARGE", f"a display frame of {len(payload)} bytes is over {MAX_FRAME_BYTES}")
            return len(payload).to_bytes(HEADER_BYTES, "big") + payload
        return self.encode({"kind": "display", "id": operation_id, "seq": seq, "data": data, "metadata": metadata})

    def send_threadsafe(self, frame: bytes) -> None:
        """Write ``frame`` now from any thread (live output); frames queued on the loop may follow it."""
        if self.closed:
            return
        if self._write(frame) and self._loop is not None and self.on_broken is not None:
            error = self._broken
            try:
                self._loop.call_soon_threadsafe(self.on_broken, error)
            except RuntimeError:
                pass  # the loop is closed: the worker is exiting anyway

    def send_now(self, frame: bytes) -> None:
        """Write ``frame`` immediately (the hello, before the loop runs)."""
        if os.getpid() != self.pid:
            return
        self.sock.sendall(frame)

    def send(self, frame: bytes) -> None:
        """Queue ``frame`` for writing on the loop thread, after every frame queued before it."""
        if self.closed or self._loop is None:
            return
        outbox = self._outbox
        outbox.append(frame)
        if len(outbox) == 1:
            self._loop.call_soon(self._flush)

    def send_direct(self, frame: bytes) -> None:
        """Write every queued frame, then ``frame``, now (loop thread only, never in cell code)."""
        if self.closed or self._loop is None:
            return
        outbox = self._outbox
        if outbox:
            outbox.append(frame)
            self._flush()
        else:
            self._write_on_loop(frame)

    def _flush(self) -> None:
        outbox = self._outbox
        if not outbox:
            return  # already written by send_direct
        data = outbox[0] if len(outbox) == 1 else b"".join(outbox)
        outbox.clear()
        self._write_on_loop(data)

    def _write_on_loop(self, data: bytes) -> None:
        if self._write(data) and self.on_broken is not None:
            self.on_broken(self._broken)

    def _write(self, data: bytes) -> bool:
        """Write ``data`` whole; True when this write found the connection broken."""
        if self.closed or os.getpid() != self.pid:
            return False
        with self._write_lock:
            if self.closed:
                return False
            try:
                self.sock.sendall(data)
            except OSError as error:
                # The host is gone (the reader sees EOF too), or a cell closed or replaced the
                # socket's fd (the reader may never see anything): either way nothing more can be said.
                self.closed = True
                self._broken = error
                return True
        return False

    def start(
        self,
        loop: asyncio.AbstractEventLoop,
        on_message: Callable[[dict], Any],
        on_end: Callable[[ConnectionEnd], Any],
        on_arrival: Callable[[dict], Any] | None = None,
    ) -> None:
        """Start reading: messages go to ``on_message`` on ``loop`` in order, then ``on_end`` once.

        ``on_arrival(message)`` is called as soon as a message is read, before it is queued for the
        loop, on whichever thread read it (the loop's, or the reader thread while the loop is busy).
        """
        self._loop = loop
        self._on_message = on_message
        self._on_end = on_end
        self._on_arrival = on_arrival
        self._fd = self.sock.fileno()
        self._watcher = select.epoll()
        self.doorbell = Doorbell(self.sock)
        selector = getattr(loop, "_selector", None)
        if isinstance(selector, WorkerSelector) and selector.watch is None:
            # The fd's own events are taken out in after_select: the loop never makes a handle for it.
            selector.register(self._fd, selectors.EVENT_READ, (None, None))
            selector.watch = self
            self._selector = selector
            ready = getattr(loop, "_ready", None)
            if type(ready) is collections.deque:
                # The loop's own queue of handles (CPython's BaseEventLoop): the select hook, inside
                # _run_once, queues one handle that is never cancelled, in the loop's base context.
                self._drain_handle = asyncio.Handle(self._drain, (), loop)
                self._ready_queue = ready
        self._watch()  # the reader thread reads until the loop first blocks in its select
        self._thread = threading.Thread(target=self._read_while_busy, name="klbr-reader", daemon=True)
        self._thread.start()

    # -- who reads: the loop in its select, the reader thread while the loop is busy ----------

    def before_block(self) -> None:
        """The loop blocks in select now and reads the socket itself: the reader thread stops watching."""
        if _pid == self.pid:
            self._unwatch()
            doorbell = self.doorbell
            if doorbell is not None and doorbell.on:
                doorbell.before_block()
            # What the thread queued while the loop was busy is drained first. The thread wakes the
            # loop itself only for what it queues once it sees it is not watching any more; this
            # check, after the unwatch, catches what it queued before (see _pump).
            if self._inbox:
                self._wake_loop()

    def after_select(self, ready: list, blocked: bool) -> list:
        """Read what the select found on the socket, then let the reader thread watch while the loop is busy."""
        fd = self._fd
        mine = -1
        for index, (key, _) in enumerate(ready):
            if key.fd == fd:
                mine = index
                break
        if _pid != self.pid:
            return ready if mine < 0 else ready[:mine] + ready[mine + 1 :]
        if mine >= 0:
            ready = ready[:mine] + ready[mine + 1 :]
            self._pump(on_loop=True)
        if self._inbox:
            ready_queue = self._ready_queue
            if ready_queue is not None:
                ready_queue.append(self._drain_handle)  # what call_soon(self._drain) queues, made once
            else:
                self._schedule_drain(True)
        if self._ended:
            if self._selector is not None:
                self._selector.unregister(fd)  # an ended socket stays readable: never select it again
                self._selector.watch = None
                self._selector = None
        elif blocked:
            self._watch()
        doorbell = self.doorbell
        if doorbell is not None and doorbell.wanted:
            doorbell.after_select()
        return ready

    def _watch(self) -> None:
        if not self._watching and not self._ended and self._watcher is not None:
            self._watching = True
            try:
                self._watcher.register(self._fd, select.EPOLLIN)
            except OSError:
                pass  # a cell closed the fd: the loop's read reports the end

    def _unwatch(self) -> None:
        if self._watching:
            self._watching = False
            try:
                self._watcher.unregister(self._fd)
            except OSError:
                pass

    def _read_while_busy(self) -> None:
        """The reader thread: reads whenever the socket is readable while it is watched."""
        try:
            while not self._ended:
                tick = self.reader_tick
                timeout = tick() if tick is not None else None
                if self._watcher.poll(-1 if timeout is None else timeout):
                    self._pump(on_loop=False)
        except BaseException as error:  # a bug here must still end the worker, never hang it
            with self._read_lock:
                if self._ended:
                    return
                self._ended = True
                end = ConnectionEnd("WORKER_READER_FAILED", f"{type(error).__name__}: {error}")
                if self._on_arrival is not None:
                    self._on_arrival({"kind": "<end>", "end": end})
                self._inbox.append(end)
            self._schedule_drain(False)

    def _pump(self, on_loop: bool) -> None:
        """Read what the socket holds now, without blocking; queue each message for the loop in order.

        Each message is told to ``on_arrival`` as it is read (under the read lock, so in order); on
        the reader thread before it is queued (the loop may drain it at once), on the loop thread
        after (nothing drains until this returns, and a KeyboardInterrupt a cell's own SIGINT handler
        raises in ``on_arrival`` loses nothing).
        """
        queued = False
        try:
            with self._read_lock:
                if self._ended or _pid != self.pid:
                    return
                try:
                    data = self.sock.recv(1 << 16, socket.MSG_DONTWAIT)
                except (BlockingIOError, InterruptedError):
                    return
                except OSError as error:
                    data, end = b"", ConnectionEnd(None, f"socket closed: {error}")
                else:
                    end = None if data else self._eof()
                if data:
                    messages, end = self._decode(data)
                    for message in messages:
                        queued = True
                        self._arrive(message, on_loop)
                if end is not None:
                    self._ended = True
                    queued = True
                    self._arrive_end(end, on_loop)
        finally:
            # The loop drains at its next select (after_select): while the thread watches, the loop is
            # busy and will get there. Waking it now would only give the GIL away (a self-pipe write)
            # while the cell, just kicked, has its interrupt to take.
            if queued and not on_loop and (not self._watching or self._selector is None):
                self._schedule_drain(False)

    def try_lock_reading(self) -> bool:
        """Take the read lock if it is free, without waiting (main thread, doorbell); then :meth:`unlock_reading`."""
        return self._read_lock.acquire(blocking=False)

    def unlock_reading(self) -> None:
        self._read_lock.release()

    def interrupt_waiting(self, operation_id: str) -> bool:
        """Whether the socket holds, unread, a plain ``interrupt`` for ``operation_id`` (hold :meth:`try_lock_reading`).

        Reads nothing (``MSG_PEEK``): the message is still read and handled as usual. Only looks
        when the decoder is idle, so what is peeked starts at a frame boundary; otherwise False,
        and the reader thread's path decides.
        """
        reader = self._plain_reader
        decoder = self._decoder
        if reader is None or self._ended or decoder.buffered_bytes or decoder.poisoned:
            return False
        data = self.doorbell.peek() if self.doorbell is not None else None
        if data is None:
            return False
        # What reader.read takes for this interrupt is exactly these bytes (the id is an identifier).
        wanted = reader.interrupt_payload(operation_id)
        at, size = 0, len(data)
        while size - at > HEADER_BYTES:
            end = at + HEADER_BYTES + int.from_bytes(data[at : at + HEADER_BYTES], "big")
            if end > size:
                return False
            if data[at + HEADER_BYTES : end] == wanted:
                return True
            at = end
        return False

    def _arrive(self, item: Any, on_loop: bool) -> None:
        if on_loop:
            self._inbox.append(item)
        if self._on_arrival is not None:
            self._on_arrival(item)
        if not on_loop:
            self._inbox.append(item)

    def _arrive_end(self, end: ConnectionEnd, on_loop: bool) -> None:
        if on_loop:
            self._inbox.append(end)
        if self._on_arrival is not None:
            self._on_arrival({"kind": "<end>", "end": end})
        if not on_loop:
            self._inbox.append(end)

    def _eof(self) -> ConnectionEnd:
        try:
            self._decoder.eof()
        except FrameError as error:
            return ConnectionEnd(error.code, str(error))
        return ConnectionEnd(None, "the host closed the socket")

    def _decode(self, data: bytes) -> tuple[list[dict], ConnectionEnd | None]:
        """The messages of ``data``, and the end a bad frame or envelope makes (the chunk's messages are dropped then)."""
        messages = []
        session, generation = self.session_id, self.generation
        plain = self._plain_identity
        reader = self._plain_reader
        decoder = self._decoder
        size = len(data)
        if (
            reader is not None
            and size > HEADER_BYTES
            and decoder.buffered_bytes == 0
            and not decoder.poisoned
            and int.from_bytes(data[:HEADER_BYTES], "big") == size - HEADER_BYTES <= MAX_FRAME_BYTES
        ):
            # One whole frame and an idle decoder (the usual chunk): a plain one needs no decoder.
            message = reader.read(data[HEADER_BYTES:])
            if message is not None:
                return [message], None
        try:
            for value in self._decoder.feed(data):
                message = _plain_message(value, session, generation) if plain else None
                if message is not None:
                    messages.append(message)
                    continue
                if (
                    type(value) is dict
                    and value.get("session_id") == session
                    and value.get("generation") == generation
                ):
                    # The identity checks cannot fail: the plain schema gives the same result.
                    envelope = parse_envelope(value)
                else:
                    envelope = parse_envelope(value, session, generation)
                messages.append(envelope["message"])
        except FrameError as error:
            return [], ConnectionEnd(error.code, str(error))
        except EnvelopeError as error:
            return messages, ConnectionEnd(error.code, str(error))
        return messages, None

    def _schedule_drain(self, on_loop: bool) -> None:
        loop = self._loop
        if loop is None:
            return
        try:
            if on_loop:
                loop.call_soon(self._drain)
            else:
                loop.call_soon_threadsafe(self._drain)
        except RuntimeError:
            pass  # the loop is closed: the worker is exiting anyway

    def _wake_loop(self) -> None:
        loop = self._loop
        write = getattr(loop, "_write_to_self", None)
        if write is not None:
            write()
        else:
            self._schedule_drain(False)

    def _drain(self) -> None:
        """Hand every queued message (then the end) to the worker, in the order read (loop thread)."""
        inbox = self._inbox
        while inbox:
            item = inbox.popleft()
            if type(item) is ConnectionEnd:
                self._on_end(item)
            else:
                self._on_message(item)

    def close(self) -> None:
        """Stop writing and close the socket (the reader thread then ends)."""
        self.closed = True
        self._ended = True
        if self._watcher is not None:
            self._watcher.close()  # a reader thread still waiting in it never reads again
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass  # a cell closed the fd already (EBADF)

