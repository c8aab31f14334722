"""The doorbell: the kernel signals the main thread when a message arrives while an operation's code runs.

An ``interrupt`` for a cell in a pure-Python loop used to reach it only through the reader thread:
that thread wakes from its epoll, takes the GIL from the busy cell (a switch interval, and a
scheduler wake-up on a loaded machine), reads, takes the GIL again after the ``recv``, and sends
SIGINT, which the main thread handles once it has the GIL back: three hand-offs between threads,
most of a millisecond or more on a busy 2-core box.

With the socket in ``O_ASYNC`` mode (Linux: ``F_SETSIG`` to :data:`DOORBELL_SIGNAL`, ``F_SETOWN_EX``
to the main thread while the doorbell is on, to no one otherwise), the kernel sends that signal to
the main thread as the message arrives. The main thread, running the cell, already holds the GIL:
its eval loop runs the worker's handler at
its next check (a blocking call such as ``time.sleep`` returns EINTR first), and the handler peeks
at the socket (it reads nothing, see ``Connection.interrupt_waiting``) and raises
KeyboardInterrupt in the cell's code when the message is the interrupt for it. Everything else
(reading, the loop's cancel, the kicks and their retries) is unchanged, so the doorbell only adds
an earlier landing; where it cannot act (the worker's own frames, a cell with its own SIGINT
handler or SIGINT blocked, another platform) the reader thread's path does as before.

The signal is aimed at the main thread only while an operation's code may run (``want(True)``
when it is armed; the loop aims it again after each select while that holds) and at no one from
before the loop blocks in its select, so an idle worker, and the cell path in between, get no
signal (``O_ASYNC`` itself stays set: switching it registers and frees the socket's fasync entry
each time, twice the cost of switching the owner). SIGURG's default action is to ignore it: a cell
that resets its handler loses only the doorbell. A message that arrives while the signal is aimed
interrupts the cell's blocking system call (EINTR) as the SIGINT kick always did; Python's own
calls retry.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import signal
import socket
import struct
import sys

__all__ = ["DOORBELL_SIGNAL", "Doorbell"]

#: The signal the kernel sends; ignored by default, never sent by anything else the worker runs.
DOORBELL_SIGNAL = signal.SIGURG
# Linux <fcntl.h>: F_SETSIG is in the fcntl module, F_SETOWN_EX and F_OWNER_TID are not.
_F_SETSIG = getattr(fcntl, "F_SETSIG", 10)
_F_SETOWN_EX = 15
_F_OWNER_TID = 0
_NO_OWNER = struct.pack("ii", _F_OWNER_TID, 0)

#: This process's pid, kept by an at-fork hook (no getpid call on the cell path).
_pid = os.getpid()


def _forked() -> None:
    global _pid
    _pid = os.getpid()


os.register_at_fork(after_in_child=_forked)


class Doorbell:
    """The signal of one socket, aimed at the thread that made it (the main thread) or at no one."""

    __slots__ = ("_fd", "_pid", "_buffer", "_owner", "on", "wanted", "usable")

    def __init__(self, sock: socket.socket) -> None:
        self._fd = sock.fileno()
        self._pid = os.getpid()
        self.on = False
        self.wanted = False
        self.usable = False
        if not sys.platform.startswith("linux"):
            return
        # O_ASYNC stays set; the switch is the owner. Setting and clearing O_ASYNC on a socket
        # registers and frees its fasync entry each time (about twice the cost of F_SETOWN_EX),
        # while a file without an owner signals no one.
        self._owner = struct.pack("ii", _F_OWNER_TID, _native_id())
        try:
            fcntl.fcntl(self._fd, _F_SETOWN_EX, _NO_OWNER)
            fcntl.fcntl(self._fd, _F_SETSIG, DOORBELL_SIGNAL)
            fcntl.fcntl(self._fd, fcntl.F_SETFL, fcntl.fcntl(self._fd, fcntl.F_GETFL) | os.O_ASYNC)
        except OSError:
            return
        self._buffer = ctypes.create_string_buffer(_PEEK_BYTES)
        self.usable = True

    def want(self, wanted: bool) -> None:
        """Ring from now on (an operation's code is about to run), or not (it is over); loop thread."""
        self.wanted = wanted
        if wanted and not self.on:
            self._switch(True)

    def before_block(self) -> None:
        """The loop blocks in its select: no signal while it waits (it reads the socket itself)."""
        if self.on:
            self._switch(False)

    def after_select(self) -> None:
        """The loop is busy again: ring while an operation's code may still run (an awaiting cell)."""
        if self.wanted and not self.on:
            self._switch(True)

    def _switch(self, on: bool) -> None:
        # The file description is shared with a child a cell forked: only the worker switches it.
        if not self.usable or _pid != self._pid:
            return
        try:
            fcntl.fcntl(self._fd, _F_SETOWN_EX, self._owner if on else _NO_OWNER)
        except OSError:
            self.usable = False  # a cell closed or replaced the fd: the reader thread's path remains
            return
        self.on = on

    def peek(self) -> bytes | None:
        """What the socket holds unread (at most 64 KiB), reading nothing; None when that fails.

        libc's ``recv`` through :class:`ctypes.PyDLL`, which keeps the GIL: ``socket.recv`` would
        give it away for the call, and the reader thread, woken by the same message and waiting
        for it, would take it (and then wait for the read lock the doorbell holds): two hand-offs
        between threads in the middle of the interrupt.
        """
        if _recv is None:
            return None
        got = _recv(self._fd, self._buffer, _PEEK_BYTES, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        return ctypes.string_at(self._buffer, got) if got > 0 else None

_PEEK_BYTES = 1 << 16


def _libc_recv():
    try:
        recv = ctypes.PyDLL(None, use_errno=True).recv
    except (OSError, AttributeError):
        return None
    recv.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    recv.restype = ctypes.c_ssize_t
    return recv


_recv = _libc_recv() if sys.platform.startswith("linux") else None


def _native_id() -> int:
    import threading

    return threading.get_native_id()
