"""``python -m klbr.worker --token-stdin ...``: the remote end of a worker reached over a channel.

A worker started over SSH cannot get its token in the environment without it appearing in the
remote command line, and the host's signals cannot reach it. So the process SSH starts is a
*keeper*: it reads the token as the first line of its stdin, starts the real worker (the same
command without ``--token-stdin``, the token in that child's environment only) in a new session,
and stays its parent. It is a child subreaper, so every process of the worker's tree stays below it.

Its stdin stays the control channel, one line per command:

* ``int``: the SIGINT rung of the interrupt ladder (C7), sent to the worker;
* ``kill``, or end of file (the SSH connection dropped, or the host killed its ssh): the hard
  stop, every process below the keeper is killed, then the keeper exits.

When the worker exits on its own (``shutdown``, EOF on its socket, ``kill -9`` from anyone), the
keeper kills what is left of the tree and exits with the worker's status, which ends the SSH
session. The first line it writes on stdout is ``klbr.keeper pid=<worker pid> python=<version>``;
the host reads the remote pid and the interpreter's version there. On exit it removes the socket path it was given (the SSH server's
listener, which nothing else removes).
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from typing import Sequence

from .errors import WorkerError
from .reaper import kill_descendants, set_child_subreaper

__all__ = ["KEEPER_PID_PREFIX", "MAX_TOKEN_LINE", "keep", "read_token"]

#: The first stdout line of a keeper, followed by the worker's pid and a newline.
KEEPER_PID_PREFIX = "klbr.keeper pid="
#: The token line is read byte by byte up to this many bytes (a token is 64 hex digits).
MAX_TOKEN_LINE = 1024


def read_token(fd: int = 0) -> str:
    """Read the first line of ``fd`` one byte at a time (nothing after it is consumed)."""
    line = bytearray()
    while True:
        byte = os.read(fd, 1)
        if not byte:
            raise WorkerError("WORKER_TOKEN_MISSING", "stdin ended before the token line")
        if byte == b"\n":
            break
        line += byte
        if len(line) > MAX_TOKEN_LINE:
            raise WorkerError("WORKER_TOKEN_MISSING", f"the token line is longer than {MAX_TOKEN_LINE} bytes")
    token = line.decode("ascii", "replace").strip()
    if not token:
        raise WorkerError("WORKER_TOKEN_MISSING", "the token line is empty")
    return token


def _worker_argv(argv: Sequence[str]) -> list[str]:
    args, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--limits":
            skip = True
        elif arg != "--token-stdin":
            args.append(arg)
    return [sys.executable, "-m", "klbr.worker", *args]


def _limits_of(argv: Sequence[str]) -> dict:
    """The ``--limits`` JSON (C17): the rlimits the host's limits stand for on this machine."""
    args = list(argv)
    for i, arg in enumerate(args[:-1]):
        if arg == "--limits":
            import json

            return json.loads(args[i + 1])
    return {}


def _rlimit_setter(limits: dict):
    """A preexec function setting the worker's rlimits, or None; refuses what cannot bind (NPROC for root)."""
    rlimits = limits.get("rlimits") or {}
    if not rlimits:
        return None
    if "NPROC" in rlimits and os.getuid() == 0:
        raise WorkerError("LIMITS_UNAVAILABLE", "procs (RLIMIT_NPROC) does not bind uid 0 on this target")
    import resource

    pairs = [(getattr(resource, "RLIMIT_" + name), (soft, hard)) for name, (soft, hard) in rlimits.items()]

    def apply() -> None:
        for which, value in pairs:
            resource.setrlimit(which, value)

    return apply


def _socket_of(argv: Sequence[str]) -> str | None:
    args = list(argv)
    for i, arg in enumerate(args[:-1]):
        if arg == "--socket":
            return args[i + 1]
    return None


def _status(code: int) -> int:
    return code if code >= 0 else 128 - code


def keep(argv: Sequence[str], token_env: str) -> int:
    """Run the keeper over ``argv`` (the worker's flags, ``--token-stdin`` among them); returns the exit code."""
    token = read_token(0)
    set_child_subreaper()
    # A signal the connection's end may bring (SIGHUP, SIGPIPE on a write) must not kill the keeper
    # before it has killed the tree; SIGINT is the worker's, sent through the control line.
    for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(signum, signal.SIG_IGN)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    # A handler (not SIG_DFL) so that set_wakeup_fd is written on every SIGCHLD and SIGTERM.
    signal.signal(signal.SIGCHLD, lambda *_: None)
    terminated = []
    signal.signal(signal.SIGTERM, lambda *_: terminated.append(True))
    env = dict(os.environ)
    env[token_env] = token
    # The host's limits, as rlimits of the worker (the keeper's cleanup stays outside them).
    limit = _rlimit_setter(_limits_of(argv))
    worker = subprocess.Popen(_worker_argv(argv), env=env, stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=limit)
    del env
    version = ".".join(str(n) for n in sys.version_info[:3])
    sys.stdout.write(f"{KEEPER_PID_PREFIX}{worker.pid} python={version}\n")
    sys.stdout.flush()
    code: int | None = None
    pending = b""
    try:
        while code is None and not terminated:
            try:
                ready, _, _ = select.select([0, wake_r], [], [])
            except InterruptedError:
                ready = []
            if wake_r in ready:
                os.read(wake_r, 512)
            status = worker.poll()
            if status is not None:
                code = _status(status)
                break
            if 0 in ready:
                chunk = os.read(0, 512)
                if not chunk:
                    code = 137  # the channel ended: the hard stop
                    break
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    command = line.strip()
                    if command == b"int":
                        worker.send_signal(signal.SIGINT)
                    elif command == b"kill":
                        code = 137
                        break
    finally:
        # The worker first (and its group), then everything else below the keeper, reaped.
        if worker.poll() is None:
            try:
                os.killpg(worker.pid, signal.SIGKILL)
            except OSError:
                pass
        kill_descendants(grace=0.0)
        worker.poll()
        socket_path = _socket_of(argv)
        if socket_path:
            try:
                os.unlink(socket_path)
            except OSError:
                pass
    return 143 if terminated and code is None else (code if code is not None else 0)
