"""The worker: one asyncio loop on the main thread serving the host's messages.

* ``execute`` (workbench): one foreground operation at a time; the cell runs as a Task on this
  loop, in a context that carries its :class:`~klbr.runtime.ExecutionScope`.
* ``invoke`` (hooks): invocations run one at a time in arrival order (one bounded actor).
* ``interrupt``: cancels the running operation's task. Because a cell stuck in synchronous code
  never lets the loop run, the reader thread (which reads while the loop is busy, see
  ``connection.py``) also sends SIGINT to the main thread (the "kick");
  the SIGINT handler raises KeyboardInterrupt only while the foreground task is running its own
  code (never in the loop, never in a background task, never inside the worker's own frames), and
  ignores it at any other time. The host's own SIGINT (rung 2 of the C7 ladder) takes the same path.
  The interrupt is a flag on the operation (``Foreground.kick_pending``), made by the reader thread
  as soon as it reads the ``execute``: whichever of the reader (interrupt read) and the cell
  (code entered, ``armed``) comes second kicks. One signal can still be lost: one that arrives
  after the main thread's last check and before it blocks in a system call (``time.sleep``) is
  handled only when that call returns. So a kick that has not landed (raised in the cell's code)
  is sent again every ``KICK_RETRY`` seconds by the kicker thread, until it lands, the cell's code
  is over, or the cell installed a SIGINT handler of its own. A kick the reader thread sent is
  retried the first time by the reader itself (it waits for its next message at most that long),
  so nothing wakes another thread while the kicked cell completes.
  On Linux the doorbell (``doorbell.py``) comes first: while the operation's code runs, the kernel
  signals the main thread as the ``interrupt`` arrives, and its handler raises KeyboardInterrupt
  where the SIGINT handler would, with no other thread involved; where it cannot, it kicks as above.
* ``shutdown`` / EOF: send nothing more, terminate and reap every descendant, exit (0). If the
  loop does not get there within ``exit_grace`` seconds (a cell that swallows the interrupt), the
  reader thread does it itself, so no worker outlives its host.
* A bad frame or envelope from the host: one diagnostic line on stderr, exit 2.
* SIGTERM: terminate and reap every descendant, exit 143.
"""

from __future__ import annotations

import asyncio
import collections
import errno
import contextvars
import os
import signal
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

from klbr.runtime import ExecutionScope, HostClient, Runtime, WaitYield, current_scope

from .capture import CaptureStream, OutputCapture, clean_text, cut_utf8, utf8_length
from .cells import CellCompiler, format_error, make_namespace, run_compiled
from .connection import Connection, ConnectionEnd
from .doorbell import DOORBELL_SIGNAL
from .loop import new_worker_loop, start_task
from .reaper import Reaper, has_children, kill_descendants

try:  # the C functions signal.py wraps: the same handler and mask, without the wrappers' enum lookups
    from _signal import getsignal as _getsignal, pthread_sigmask as _pthread_sigmask
except ImportError:  # another implementation: the wrappers
    _getsignal, _pthread_sigmask = signal.getsignal, signal.pthread_sigmask

if TYPE_CHECKING:  # the hooks role's imports are loaded only by that role (live output's only with it)
    from .hooks_role import HookSource
    from .display import Displays
    from .live import LiveOutput

__all__ = [
    "DOORBELL_SWITCH_INTERVAL", "KICK_RETRY", "MAX_ERROR_BYTES", "MAX_QUEUED_INVOCATIONS", "REAP_IDLE_INTERVAL", "SWITCH_INTERVAL", "Foreground", "Worker", "in_worker_code"
]

#: The ``error`` text of a completion is cut to this many UTF-8 bytes (C7).
MAX_ERROR_BYTES = 65_536
#: Seconds a busy main thread holds the GIL before the reader thread may take it: most of the
#: interrupt latency of a cell in a pure-Python loop (the reader needs the GIL twice, to return
#: from its wait and from its read, before it can kick). 0.1 ms: the reader no longer takes part in
#: a cell that does not outlast the host's next message (the loop reads that one itself), so a
#: short interval no longer costs every cell hand-offs as it did at 0.2 ms with a reader in the
#: middle of each message. It only matters under contention: a cell's own CPU-bound threads switch
#: this often too.
SWITCH_INTERVAL = 0.0001
#: The switch interval when the doorbell delivers interrupts (doorbell.py): the reader thread, woken
#: by the same message, waits this long before it may take the GIL from the cell, by which time the
#: doorbell's KeyboardInterrupt has ended it (forcing the switch at 0.1 ms put two hand-offs between
#: threads into the interrupt). The kicks the doorbell cannot land itself still retry every 1 ms.
DOORBELL_SWITCH_INTERVAL = 0.001
#: Seconds between two scans of the process tree while the worker is idle and has no child. An
#: idle worker with no child has nothing to reap until a child exits or an operation starts (which
#: may start children): at hundreds of idle workbenches, a scan every second in each was a wake-up
#: per workbench per second, for nothing. A child's exit wakes the scans at once when the kernel
#: hands its SIGCHLD to the main thread, asleep in the loop's select; it goes to the thread that
#: started the child when that one still runs (a cell's thread), and then this is the latest.
REAP_IDLE_INTERVAL = 10.0
#: Seconds between two kicks of an interrupt that has not landed in the operation's code yet.
KICK_RETRY = 0.001
#: After this many retries at KICK_RETRY, the kicker retries ten times less often (a cell that
#: blocks SIGINT is waiting for the host's own SIGINT or hard stop, not for more kicks).
_FAST_KICKS = 100
#: Invocations waiting behind the running one; more are refused with a failed completion.
MAX_QUEUED_INVOCATIONS = 64

_KLBR_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_WORKER_DIR = os.path.join(_KLBR_DIR, "worker")
_RUNTIME_FILE = os.path.join(_KLBR_DIR, "runtime.py")
# The worker frames that call an operation's own code: an interrupt may unwind into them.
_LAUNCHERS = frozenset(
    {
        (os.path.join(_WORKER_DIR, "cells.py"), "_evaluate"),
        (os.path.join(_WORKER_DIR, "server.py"), "_run_cell"),  # repr() of the final value
        (os.path.join(_WORKER_DIR, "hooks_role.py"), "call_handler"),
        (os.path.join(_WORKER_DIR, "display.py"), "_call"),  # a display's own _repr_*_ / savefig (C20)
    }
)


def in_worker_code(frame: Any) -> bool:
    """Whether a KeyboardInterrupt raised in ``frame`` would unwind through the worker's own code.

    True when ``frame`` or a frame below it, up to the worker frame that launched the operation's
    code, is the worker's (``klbr/worker/`` or ``klbr/runtime.py``): the cell's ``print`` inside
    ``CaptureStream.write``, or a runtime call inside asyncio's ``call_soon`` or the JSON encoder
    reached from ``klbr.runtime`` (the innermost frame alone is not the worker's there, and the
    request would be left half-queued). Other klbr modules a cell calls itself are its own code.
    """
    above = False  # a frame of the operation's own code (or of what it called) was passed
    while frame is not None:
        code = frame.f_code
        filename = code.co_filename
        if not filename.startswith("<"):
            worker = _worker_file(filename)
            if worker is not None:
                return not (above and (worker, code.co_name) in _LAUNCHERS)
        above = True
        frame = frame.f_back
    return False


#: Absolute source paths seen by in_worker_code: the worker's own path, or None (bounded by the
#: number of source files; the doorbell's handler walks frames on the interrupt's path).
_WORKER_FILES: dict[str, str | None] = {}


def _worker_file(filename: str) -> str | None:
    """``filename`` made absolute when it is one of the worker's files, else None."""
    known = _WORKER_FILES.get(filename, False)
    if known is not False:
        return known  # type: ignore[return-value]
    path = os.path.abspath(filename)
    worker = path if path == _RUNTIME_FILE or path.startswith(_WORKER_DIR + os.sep) else None
    if os.path.isabs(filename):  # a relative name depends on the working directory: never kept
        _WORKER_FILES[filename] = worker
    return worker


class Foreground:
    """The one running operation: a cell (with its scope and capture) or a hook invocation."""

    __slots__ = (
        "id", "kind", "task", "armed", "kick_pending", "kick_landed", "interrupted", "scope", "capture",
        "completed", "on_done",
    )

    def __init__(
        self, id: str, kind: str, scope: ExecutionScope | None = None, capture: OutputCapture | None = None
    ) -> None:
        self.id = id
        self.kind = kind
        self.task: asyncio.Task | None = None
        #: True while the operation's own code may be running: SIGINT may raise in it.
        self.armed = False
        #: Set by the reader thread when an interrupt (or the end) arrived for this operation: if its
        #: code was not armed yet, it kicks itself when it arms (see ``Worker._arm``).
        self.kick_pending = False
        #: Set once the kick raised KeyboardInterrupt in the operation's code (or the loop cancelled
        #: its task): the kicker stops sending it again.
        self.kick_landed = False
        self.interrupted = False
        self.scope = scope
        self.capture = capture
        #: True once the completion was sent (by the cell's task itself, or by its done callback).
        self.completed = False
        self.on_done: Any = None


def sigint_handler() -> Any:
    """``signal.getsignal(signal.SIGINT)``, compared the same (an int where that gives its enum).

    The wrapper turns the result into a ``Handlers`` enum member when it can, and for any other
    handler (the worker's own bound method) that lookup raises and catches a ValueError inside
    the enum machinery: about 10 us on the doorbell's path, which runs as the interrupt lands.
    """
    return _getsignal(signal.SIGINT)


def sigint_blocked() -> bool:
    """``signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, ())``, without the enum set it builds."""
    return signal.SIGINT in _pthread_sigmask(signal.SIG_BLOCK, ())


def _diagnose(line: str) -> None:
    try:
        sys.__stderr__.write(f"klbr.worker: {line}\n")
        sys.__stderr__.flush()
    except (AttributeError, OSError, ValueError):
        pass


def _cut_error(text: str) -> tuple[str, int]:
    text = clean_text(text)
    size = utf8_length(text)
    if size <= MAX_ERROR_BYTES:
        return text, 0
    kept = cut_utf8(text, MAX_ERROR_BYTES)
    return kept, size - utf8_length(kept)


def _plain_display(*objs: Any, metadata: Any = None) -> None:
    """``display()`` in a workbench started without ``--display`` (C20 not negotiated): each repr on stdout."""
    for obj in objs:
        print(repr(obj))


class Worker:
    """Serves one connection in one role until shutdown, EOF or a protocol error."""

    def __init__(
        self,
        role: str,
        conn: Connection,
        *,
        hooks: HookSource | None = None,
        exit_grace: float = 3.0,
        reap_interval: float = 1.0,
        live_output: bool = False,
        display: bool = False,
    ) -> None:
        self.role = role
        self.conn = conn
        self.hooks = hooks
        self.exit_grace = exit_grace
        self.reap_interval = reap_interval
        #: The next scan of the process tree, and whether it is the idle backstop (see _reap).
        self._reap_handle: asyncio.TimerHandle | None = None
        self._reap_idle = False
        self.loop: asyncio.AbstractEventLoop | None = None
        self.fg: Foreground | None = None
        self.exit_code: int | None = None
        self.client = HostClient(conn.encode, conn.send)
        self.reaper = Reaper()
        self._main_ident = threading.main_thread().ident
        self._sigint_target: str | None = None
        self._ending = threading.Lock()
        self._ending_started = False
        self._queue: collections.deque[dict] = collections.deque()
        #: The cells of the ``execute`` messages the reader thread read, by id, each made before the
        #: loop is told of it and kept until it ends: an interrupt read before the loop started the
        #: cell sets the same flag the cell reads when its code starts.
        self._arriving: dict[str, Foreground] = {}
        #: The kicker thread sleeps on this pipe's read end; a byte wakes it (see ``_watch_kick``).
        self._kicker_r, self._kicker_w = os.pipe()
        #: When the reader thread retries the kick it sent (monotonic seconds), or None.
        self._first_retry: float | None = None
        os.set_blocking(self._kicker_w, False)
        self._actor: asyncio.Task | None = None
        #: C20 rich display, when the host asked for it (--display; the workbench only).
        self.displays: Displays | None = None
        if role == "workbench":
            self.runtime = Runtime(self.client)
            if display:
                from . import display as display_module

                self.displays = display_module.Displays(conn.encode_display, conn.send_threadsafe)
                display_module.current = self.displays
                display_module.install_matplotlib_hook()
                show = self.displays.display
            else:
                show = _plain_display
            self.namespace = make_namespace(runtime=self.runtime, display=show)
            self.compiler = CellCompiler()
            self._stdout = CaptureStream("stdout", self._route, sys.__stdout__)
            self._stderr = CaptureStream("stderr", self._route, sys.__stderr__)
        #: C16 live output, when the host asked for it (--live-output; the workbench only).
        self.live: LiveOutput | None = None
        if live_output and role == "workbench":
            from .live import LiveOutput

            self.live = LiveOutput(conn.encode_output, conn.send_threadsafe)
            if self.displays is not None:
                # C20 with C16: output the cell wrote before a display reaches the host before it.
                self.displays.before_send = self.live.flush

    # -- running -------------------------------------------------------------------------

    def run(self, hello: dict) -> int:
        """Send ``hello``, serve until the end, clean up the process tree; returns the exit code."""
        self.prepare()
        return self.serve(hello)

    def prepare(self) -> None:
        """Make the loop, the signal handlers and the threads, and start reading the connection.

        A warm spare (C19) does this before it knows its identity: what is left once it has it
        (:meth:`serve`) is the hello. Nothing reaches the connection before the hello (the host
        writes only after it), so reading may start first.
        """
        self.loop = new_worker_loop()
        asyncio.set_event_loop(self.loop)
        self.client.loop = self.loop
        signal.signal(signal.SIGINT, self._on_sigint)
        signal.signal(signal.SIGTERM, self._on_sigterm)
        signal.signal(DOORBELL_SIGNAL, self._on_doorbell)
        # Every message rings while a cell runs, not only its interrupt: a system call the signal
        # interrupts is restarted (SA_RESTART), so a C library's blocking read in the cell does not
        # fail with EINTR. Calls that never restart (sleep, select, poll) still return at once.
        signal.siginterrupt(DOORBELL_SIGNAL, False)
        # A child that exits wakes the idle reaper (REAP_IDLE_INTERVAL); restarted like the doorbell.
        signal.signal(signal.SIGCHLD, self._on_sigchld)
        signal.siginterrupt(signal.SIGCHLD, False)
        threading.Thread(target=self._kicker, name="klbr-kicker", daemon=True).start()
        self.conn.on_broken = self._on_broken
        self.conn.reader_tick = self._reader_tick
        self.conn.start(self.loop, self._on_message, self._on_end, self._on_arrival)
        # Without the doorbell the reader thread needs the GIL from a busy cell to deliver an
        # interrupt, and the default 5 ms switch interval would be most of its latency; with it,
        # that thread must not take the GIL from the cell the doorbell is interrupting.
        doorbell = self.conn.doorbell
        sys.setswitchinterval(DOORBELL_SWITCH_INTERVAL if doorbell is not None and doorbell.usable else SWITCH_INTERVAL)
        self._reap_handle = self.loop.call_later(self.reap_interval, self._reap)

    def serve(self, hello: dict) -> int:
        """Send ``hello`` and serve until the end (after :meth:`prepare`); returns the exit code."""
        assert self.loop is not None
        self.conn.send_now(self.conn.encode(hello))
        while self.exit_code is None:
            try:
                self.loop.run_forever()
            except (KeyboardInterrupt, SystemExit) as error:
                # A cell's background task raised it out of the loop; the worker keeps serving.
                _diagnose(f"a background task raised {type(error).__name__}; ignored")
        self.conn.close()
        kill_descendants()
        return self.exit_code

    def _finish(self, code: int, diagnostic: str | None) -> None:
        if self.exit_code is not None:
            return
        self.exit_code = code
        self.conn.closed = True  # send nothing more
        if diagnostic:
            _diagnose(diagnostic)
        fg = self.fg
        if fg is not None and fg.task is not None:
            fg.task.cancel()
        assert self.loop is not None
        self.loop.stop()

    def _on_broken(self, error: OSError) -> None:
        # The host hung up: the reader sees the EOF and ends the worker as that says (clean or not).
        if error.errno in (errno.EPIPE, errno.ECONNRESET, errno.ESHUTDOWN):
            return
        # The fd is not our socket any more (a cell closed or replaced it): nothing can reach the host.
        self._finish(2, f"the connection is unusable ({type(error).__name__}: {error}); exiting")

    def _reap(self) -> None:
        """Scan for orphans and stale zombies: every ``reap_interval`` while there are children or an
        operation runs, else only at the idle backstop, a child's exit or the next operation."""
        self._reap_handle = None
        if self.exit_code is not None:
            return
        idle = False
        try:
            if has_children():
                self.reaper.scan()
            else:
                idle = self.fg is None and not self._queue
        finally:
            assert self.loop is not None
            self._reap_idle = idle
            self._reap_handle = self.loop.call_later(REAP_IDLE_INTERVAL if idle else self.reap_interval, self._reap)

    def _wake_reaper(self, delay: float) -> None:
        """Loop thread: scan after ``delay`` instead of at the idle backstop (no-op unless idle)."""
        if not self._reap_idle or self.exit_code is not None or self.loop is None:
            return
        self._reap_idle = False
        if self._reap_handle is not None:
            self._reap_handle.cancel()
        self._reap_handle = self.loop.call_later(delay, self._reap)

    def _on_sigchld(self, signum: int, frame: Any) -> None:
        # Main thread, anywhere (a cell's code too): only hand it to the loop, which may be blocked
        # in its select (call_soon_threadsafe writes the loop's wake-up pipe).
        if self._reap_idle and self.loop is not None and self.exit_code is None:
            try:
                self.loop.call_soon_threadsafe(self._wake_reaper, 0)
            except RuntimeError:
                pass  # the loop is closed: the worker is exiting

    # -- the reader thread's side ---------------------------------------------------------

    def _on_arrival(self, message: dict) -> None:
        """Runs on the reader thread, right before the message is queued for the loop."""
        kind = message.get("kind")
        fg = self.fg
        if kind == "execute":
            operation_id = message.get("id")
            if self.role == "workbench" and type(operation_id) is str:
                # The loop takes this one as the cell (see _execute): the flag an interrupt sets on
                # it from now on is the one the cell reads when its code starts.
                self._arriving[operation_id] = Foreground(operation_id, "cell")
        elif kind == "interrupt":
            target = message.get("id")
            arriving = self._arriving.get(target) if type(target) is str else None
            if arriving is not None and arriving is not fg:
                self._kick_when_armed(arriving)
            if fg is not None and fg.id == target:
                self._kick_when_armed(fg)
        elif kind in ("shutdown", "<end>"):
            if fg is not None:
                self._kick_when_armed(fg)
            end = message.get("end")
            code = 0 if end is None or end.clean else 2
            self._start_watchdog(code)

    def _kick_when_armed(self, fg: Foreground) -> None:
        # The operation may have been started (its task created) without having run yet: then the
        # loop-side cancel is queued behind the task's first step, which may block the loop for
        # good. The flag is set before armed is read, and _arm sets armed before reading the flag,
        # so at least one side kicks (both may: a second SIGINT finds the operation disarmed or
        # lands in its code, which is being interrupted anyway).
        fg.kick_pending = True
        if fg.armed and not fg.kick_landed:  # landed: the doorbell raised it already
            self._kick(fg.id)

    def _arm(self, fg: Foreground) -> None:
        """Mark ``fg``'s own code as running; kick it at once when an interrupt came first."""
        fg.armed = True
        doorbell = self.conn.doorbell
        if doorbell is not None:
            doorbell.want(True)  # from now on an arriving interrupt signals this thread (doorbell.py)
        if fg.kick_pending:
            self._kick(fg.id)

    def _disarm(self, fg: Foreground) -> None:
        fg.armed = False
        doorbell = self.conn.doorbell
        if doorbell is not None:
            doorbell.wanted = False  # switched off before the loop next blocks, off the cell's path

    def _kick(self, target: str) -> None:
        self._send_sigint(target)
        if threading.get_ident() == self._main_ident:
            self._watch_kick()
        else:
            # The reader thread kicked a running cell: waking the kicker now (a pipe write) would
            # give the GIL away and take it back while the cell, just kicked, is completing; the
            # reader retries the kick itself once (_reader_tick), waiting for its next message.
            self._first_retry = time.monotonic() + KICK_RETRY

    def _reader_tick(self) -> float | None:
        """Reader thread, before each wait: the first retry of its kick; the kicker sends the later ones."""
        due = self._first_retry
        if due is None:
            return None
        left = due - time.monotonic()
        if left > 0:
            return left
        self._first_retry = None
        fg = self.fg
        if fg is not None and self._kick_unlanded(fg):
            self._send_sigint(fg.id)
            self._watch_kick()  # not landed: the cell blocks in a call, the GIL is free
        return None

    def _send_sigint(self, target: str) -> None:
        self._sigint_target = target
        try:
            signal.pthread_kill(self._main_ident, signal.SIGINT)
        except (OSError, ValueError):
            pass

    def _watch_kick(self) -> None:
        """Wake the kicker: it sends the kick again until it lands. Lock-free (signal handlers call it)."""
        try:
            os.write(self._kicker_w, b"k")
        except OSError:
            pass  # the pipe is full: the kicker is awake anyway

    def _kick_unlanded(self, fg: Foreground) -> bool:
        """Whether ``fg`` still waits for its kick: asked, not landed, its code running, our handler in place."""
        return (
            self.fg is fg and fg.kick_pending and not fg.kick_landed and fg.armed
            and sigint_handler() == self._on_sigint
        )

    def _kicker(self) -> None:
        """The kicker thread: sends a kick again while it has not landed (see the module docstring)."""
        while True:
            try:
                os.read(self._kicker_r, 64)
            except InterruptedError:
                continue
            except OSError:
                return
            retries = 0
            while True:
                time.sleep(KICK_RETRY if retries < _FAST_KICKS else KICK_RETRY * 10)
                retries += 1
                fg = self.fg
                if fg is None or not self._kick_unlanded(fg):
                    break
                self._send_sigint(fg.id)

    def _start_watchdog(self, code: int) -> None:
        with self._ending:
            if self._ending_started:
                return
            self._ending_started = True

        def watchdog() -> None:
            time.sleep(self.exit_grace)
            _diagnose(f"the cell did not stop within {self.exit_grace}s of the end; exiting")
            kill_descendants()
            os._exit(code)

        threading.Thread(target=watchdog, name="klbr-exit-watchdog", daemon=True).start()

    def _on_sigterm(self, signum: int, frame: Any) -> None:
        # Terminated from outside: take the tree down with us, like a shutdown without goodbye.
        self.conn.closed = True
        kill_descendants()
        os._exit(128 + signum)

    def _on_doorbell(self, signum: int, frame: Any) -> None:
        """A message arrived while an operation's code runs (doorbell.py): an interrupt for it lands now.

        Raises KeyboardInterrupt where the SIGINT handler would (the operation's own code, its task
        current, the worker's SIGINT handler in place); anywhere else it kicks as the reader thread
        would (SIGINT, retried until it lands). The read lock is taken first: the reader thread,
        woken by the same message, must not read it away while this handler looks at it (it reads
        it afterwards, and finds the kick landed).
        """
        conn = self.conn
        if not conn.try_lock_reading():
            return  # the reader thread is reading it: its path kicks
        try:
            fg = self.fg
            if fg is None or not fg.armed or fg.kick_landed or fg.task is None:
                return
            if not conn.interrupt_waiting(fg.id):
                return
            fg.kick_pending = True
            try:
                current = asyncio.current_task(self.loop) is fg.task
            except RuntimeError:
                current = False
            if (
                current
                and sigint_handler() == self._on_sigint
                and not in_worker_code(frame)
                and not sigint_blocked()
            ):
                fg.kick_landed = True
            else:
                # Not here (the worker's frames; a cell with its own SIGINT handler, or one that
                # blocks SIGINT): the usual kick, which reaches the cell as SIGINT does.
                self._kick(fg.id)
                return
        finally:
            conn.unlock_reading()
        raise KeyboardInterrupt

    def _on_sigint(self, signum: int, frame: Any) -> None:
        target, self._sigint_target = self._sigint_target, None
        fg = self.fg
        if fg is None or not fg.armed or fg.task is None:
            return
        if target is not None and target != fg.id:
            return
        try:
            if asyncio.current_task(self.loop) is not fg.task:
                return
        except RuntimeError:
            return
        if in_worker_code(frame):
            # Inside the worker's own bookkeeping: the kicker tries again in a moment, in the cell's code.
            fg.kick_pending = True
            self._watch_kick()
            return
        fg.kick_landed = True
        raise KeyboardInterrupt

    # -- the loop's side -------------------------------------------------------------------

    def _on_end(self, end: ConnectionEnd) -> None:
        if end.clean:
            self._finish(0, None)
        else:
            self._finish(2, f"protocol error: {end.code}: {end.detail}")

    def _on_message(self, message: dict) -> None:
        if self.exit_code is not None:
            return
        kind = message.get("kind")
        if kind == "host_reply":
            self.client.resolve(message)
        elif kind == "execute":
            if self._reap_idle:
                self._wake_reaper(self.reap_interval)  # the cell may start children
            self._execute(message["id"], message["code"])
        elif kind == "invoke":
            if self._reap_idle:
                self._wake_reaper(self.reap_interval)
            self._invoke(message)
        elif kind == "interrupt":
            fg = self.fg
            if fg is not None and fg.id == message["id"] and fg.task is not None:
                fg.interrupted = True
                fg.kick_landed = True  # the loop runs, so the cell's code is not: the cancel reaches it
                fg.task.cancel()
        elif kind == "shutdown":
            self._finish(0, None)
        else:
            self._finish(2, f"protocol error: the host sent a {kind!r} message")

    def _complete(self, operation_id: str, result: dict) -> None:
        if os.getpid() != self.conn.pid:
            # A child the cell forked ran the cell's rest: it never speaks for the worker. Gone
            # quietly, without the worker's exit path (which would sweep the worker's own tree).
            os._exit(0)
        if self.exit_code is not None:
            return
        try:
            if result["kind"] == "cell":
                frame = self.conn.encode_cell_completion(
                    operation_id,
                    result["status"],
                    result["output"],
                    result["truncated_bytes"],
                    result["error"],
                    result.get("displays_dropped"),
                )
            else:
                frame = self.conn.encode({"kind": "completed", "id": operation_id, "result": result})
        except Exception as error:  # FrameError: a hook value the wire cannot carry
            reason, _ = _cut_error(f"the result could not be encoded: {error}")
            frame = self.conn.encode(
                {"kind": "completed", "id": operation_id, "result": {"kind": "failed", "error": reason}}
            )
        # Completions are only made on the loop thread outside any operation's code: write now.
        self.conn.send_direct(frame)

    def _failed(self, operation_id: str, reason: str) -> None:
        self._complete(operation_id, {"kind": "failed", "error": _cut_error(reason)[0]})

    # -- cells ---------------------------------------------------------------------------

    def _route(self) -> OutputCapture | None:
        fg = self.fg
        if fg is None or fg.capture is None:
            return None
        scope = current_scope.get()
        # Threads start with an empty context: their writes belong to the running cell. A task
        # spawned by an earlier cell carries that cell's (ended) scope: not this cell's output.
        if scope is None or scope is fg.scope:
            return fg.capture
        return None

    def _execute(self, operation_id: str, code: str) -> None:
        if self.role != "workbench":
            self._failed(operation_id, f"execute is not served by the {self.role} role")
            return
        if self.fg is not None:
            if self._arriving.get(operation_id) is not self.fg:
                self._arriving.pop(operation_id, None)
            self._failed(operation_id, f"operation {self.fg.id} is running; one foreground operation at a time")
            return
        assert self.loop is not None
        scope = ExecutionScope(operation_id)
        fg = self._arriving.get(operation_id)
        if fg is None:
            fg = Foreground(operation_id, "cell")
        fg.scope, fg.capture = scope, OutputCapture()
        if self.live is not None:
            self.live.begin(operation_id)
            fg.capture.live = self.live.write
        if self.displays is not None:
            self.displays.begin(operation_id, scope)
        scope.on_yield = lambda: self._on_yield(fg)
        context = contextvars.copy_context()
        context.run(current_scope.set, scope)
        # An interrupt read from now on finds the cell as self.fg; one read before set the flag on
        # this same object, and the cell kicks itself when its code starts (_arm).
        self.fg = fg
        if fg.kick_pending:
            fg.interrupted = True
        sys.stdout, sys.stderr = self._stdout, self._stderr
        fg.on_done = lambda task: self._cell_done(fg, task)
        # The task's first step runs within start_task: the Foreground has its task and done
        # callback before that (the SIGINT handler and the completion look them up).
        start_task(self.loop, self._cell_task(fg, code), context, lambda task: self._track(fg, task))

    @staticmethod
    def _track(fg: Foreground, task: asyncio.Task) -> None:
        fg.task = task
        task.add_done_callback(fg.on_done)

    def _on_yield(self, fg: Foreground) -> None:
        # A task the cell spawned had its wait accepted: the cell ends (as yielded) too.
        if fg.task is not None and not fg.task.done() and asyncio.current_task() is not fg.task:
            fg.task.cancel()

    async def _run_cell(self, fg: Foreground, code: str) -> tuple[str, str | None]:
        assert fg.capture is not None
        try:
            compiled = self.compiler.compile(code, fg.id)
        except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError) as error:
            return "error", format_error(error)
        try:
            self._arm(fg)
            try:
                value = await run_compiled(compiled, self.namespace)
                if value is not None:
                    text = repr(value)
                    fg.capture.write("result", text)
                    displays = self.displays
                    if displays is not None:
                        from .display import has_rich

                        if has_rich(value):  # shown the same way as display(value) (C20), its repr made once
                            displays.show(value, None, text, rich_only=True)
            finally:
                self._disarm(fg)
        except WaitYield:
            return "yielded", None
        except KeyboardInterrupt:
            return "interrupted", None
        except asyncio.CancelledError as error:
            if fg.interrupted or fg.scope is not None and fg.scope.yielded:
                return "interrupted", None
            return "error", format_error(error)
        except BaseException as error:  # noqa: BLE001 - SystemExit in a cell is the cell's error
            return "error", format_error(error)
        return "ok", None

    async def _cell_task(self, fg: Foreground, code: str) -> tuple[str, str | None]:
        outcome = await self._run_cell(fg, code)
        # The cell's code is over (fg.armed is False, so no KeyboardInterrupt can land here) and
        # nothing below awaits: complete from inside the task, writing the frame at once, instead
        # of two loop iterations later (done callback, then the queued write). A cancellation
        # requested too late to be delivered still ends the task cancelled, and so "interrupted":
        # that case is left to the done callback, as before.
        task = fg.task
        if task is not None and not getattr(task, "_must_cancel", True):
            task.remove_done_callback(fg.on_done)
            self._end_cell(fg, *outcome)
        return outcome

    def _cell_done(self, fg: Foreground, task: asyncio.Task) -> None:
        if fg.completed:
            return
        if task.cancelled():
            status, error = "interrupted", None
        elif task.exception() is not None:
            # Not the cell's own exception (those are caught in _run_cell) but the worker's path
            # failing, e.g. CPython 3.11 raising SystemError from compile() once a background task
            # unwound a KeyboardInterrupt through the loop: still one completion, never a hang.
            status, error = "error", format_error(task.exception())
        else:
            status, error = task.result()
        self._end_cell(fg, status, error)

    def _end_cell(self, fg: Foreground, status: str, error: str | None) -> None:
        assert fg.scope is not None and fg.capture is not None
        # Bytes of an unfinished UTF-8 sequence the cell wrote to sys.stdout.buffer belong to it.
        self._stdout.end_cell()
        self._stderr.end_cell()
        fg.completed = True
        if fg.scope.yielded:
            status, error = "yielded", None
        self.client.expire(fg.scope)
        if self._arriving.get(fg.id) is fg:
            del self._arriving[fg.id]
        if self.fg is fg:
            self.fg = None
        if error is not None:
            error, cut = _cut_error(error)
            fg.capture.add_truncated(cut)
        if self.live is not None:
            self.live.end()  # every output of the cell precedes its completed (C16)
        result = {
            "kind": "cell",
            "status": status,
            "output": fg.capture.records,
            "truncated_bytes": fg.capture.truncated_bytes,
            "error": error,
        }
        if self.displays is not None:
            result["displays_dropped"] = self.displays.end()  # after its last display is written (C20)
        self._complete(fg.id, result)

    # -- hooks ---------------------------------------------------------------------------

    def _invoke(self, message: dict) -> None:
        if self.role != "hooks" or self.hooks is None:
            self._failed(message["id"], f"invoke is not served by the {self.role} role")
            return
        if len(self._queue) >= MAX_QUEUED_INVOCATIONS:
            self._failed(message["id"], f"{MAX_QUEUED_INVOCATIONS} invocations are already queued")
            return
        self._queue.append(message)
        if self._actor is None or self._actor.done():
            assert self.loop is not None
            self._actor = self.loop.create_task(self._serve_hooks())

    async def _serve_hooks(self) -> None:
        while self._queue and self.exit_code is None:
            message = self._queue.popleft()
            fg = Foreground(message["id"], "hook")
            self.fg = fg
            fg.task = asyncio.get_running_loop().create_task(self._run_hook(fg, message))
            try:
                result = await fg.task
            except asyncio.CancelledError:
                result = {"kind": "failed", "error": f"{message['slot']} invocation {fg.id} was interrupted"}
            except BaseException as error:  # noqa: BLE001 - the handler's objects misbehaved while read
                # (a decision whose attribute raises, an exception whose __str__ raises): still one
                # completion, and the actor keeps serving the queue.
                result = {"kind": "failed", "error": f"{message['slot']} invocation {fg.id} failed: {type(error).__name__}"}
            finally:
                if self.fg is fg:
                    self.fg = None
            self._complete(fg.id, result)

    async def _run_hook(self, fg: Foreground, message: dict) -> dict:
        from klbr.sdk import decision_to_wire

        from .hooks_role import call_handler

        slot = message["slot"]
        entry = self.hooks.entrypoints.get(slot, slot)
        try:
            self._arm(fg)
            try:
                decision = await call_handler(self.hooks, slot, message["input"], fg.id)
            finally:
                self._disarm(fg)
        except (KeyboardInterrupt, asyncio.CancelledError):
            return {"kind": "failed", "error": f"{slot} invocation {fg.id} was interrupted"}
        except BaseException as error:  # noqa: BLE001 - a handler never crashes the worker
            try:
                detail = str(error)
            except Exception:  # noqa: BLE001 - its __str__ is the handler's code too
                detail = "<str() failed>"
            return {"kind": "failed", "error": _cut_error(f"{entry} raised {type(error).__name__}: {detail}")[0]}
        try:
            value = decision_to_wire(slot, decision)
        except (TypeError, ValueError) as error:
            return {"kind": "failed", "error": _cut_error(f"{entry} returned a bad decision: {error}")[0]}
        return {"kind": "hook", "value": value}
