"""Keeping the worker's process tree: child subreaper, orphan reaping, and the final sweep.

The worker is a child subreaper (Linux ``prctl(PR_SET_CHILD_SUBREAPER)``), so a process a cell
started stays below the worker even when its own parent exits or it calls ``setsid``.

Reaping rule while the worker runs: a zombie child is reaped only when it is an *adopted* orphan
(seen earlier deeper in the tree, under another parent, and the same process: its start time
matches, so a new child that reused the pid is not taken for it) or when it has stayed a zombie for
``stale_after`` seconds (nobody waits for it). A child the cell itself waits on
(``subprocess.run``, ``Popen.wait``, asyncio subprocesses) is reaped by that wait first, so its
exit status is not stolen, unless the wait starts more than ``stale_after`` seconds after the
child exited (``Popen.wait`` then reports 0). On exit the worker terminates every remaining descendant, found by
walking ``/proc``, and reaps them all (:func:`kill_descendants`).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

__all__ = [
    "PR_SET_CHILD_SUBREAPER",
    "Reaper",
    "descendants",
    "has_children",
    "kill_descendants",
    "process_table",
    "set_child_subreaper",
]

#: linux/prctl.h
PR_SET_CHILD_SUBREAPER = 36


def set_child_subreaper() -> bool:
    """Make this process a child subreaper; True on success, False where unsupported (non-Linux)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _stat(pid: int) -> tuple[int, str] | None:
    """(ppid, state) of ``pid`` from /proc, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    # The command name is parenthesised and may itself contain ") ", so split at the last one.
    fields = data[data.rfind(b")") + 2 :].split()
    try:
        return int(fields[1]), fields[0].decode("ascii", "replace")
    except (IndexError, ValueError):
        return None


def _start_time(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot, /proc stat field 22), or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2 :].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def process_table() -> dict[int, tuple[int, str]]:
    """Every visible process as pid -> (ppid, state); empty where /proc is missing."""
    table: dict[int, tuple[int, str]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if name.isdigit():
            entry = _stat(int(name))
            if entry is not None:
                table[int(name)] = entry
    return table


def descendants(root: int, table: dict[int, tuple[int, str]] | None = None) -> dict[int, int]:
    """Every descendant of ``root`` as pid -> depth (1 = child), from one /proc snapshot."""
    table = process_table() if table is None else table
    children: dict[int, list[int]] = {}
    for pid, (ppid, _state) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: dict[int, int] = {}
    frontier = [(root, 0)]
    while frontier:
        parent, depth = frontier.pop()
        for child in children.get(parent, ()):
            if child not in found and child != root:
                found[child] = depth + 1
                frontier.append((child, depth + 1))
    return found


def _reap_children() -> int:
    reaped = 0
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        except InterruptedError:
            continue
        if pid == 0:
            return reaped
        reaped += 1


def kill_descendants(grace: float = 0.2, rounds: int = 20) -> int:
    """SIGTERM every descendant, SIGKILL what is left after ``grace`` seconds, reap; returns the count signalled.

    Repeats while new descendants appear (a process forking during the sweep), up to ``rounds``.
    """
    me = os.getpid()
    seen: set[int] = set()
    targets = descendants(me)
    for pid in targets:
        _signal(pid, signal.SIGTERM)
    seen.update(targets)
    deadline = time.monotonic() + grace
    while targets and time.monotonic() < deadline:
        _reap_children()
        targets = {p: d for p, d in descendants(me).items() if _stat(p) and _stat(p)[1] != "Z"}
        if targets:
            time.sleep(0.01)
    for _ in range(rounds):
        _reap_children()
        live = [p for p in descendants(me) if (_stat(p) or (0, "Z"))[1] != "Z"]
        if not live:
            break
        for pid in live:
            _signal(pid, signal.SIGKILL)
        seen.update(live)
        time.sleep(0.01)
    _reap_children()
    return len(seen)


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


class Reaper:
    """Reaps adopted orphans and stale zombies among this process's children (see module doc)."""

    def __init__(self, stale_after: float = 60.0) -> None:
        self.stale_after = stale_after
        # pid -> start time of the processes seen below a child: if they come up, they are orphans.
        # The start time tells an orphan from a new child of the cell that reused its pid.
        self._foreign: dict[int, int] = {}
        self._zombie_since: dict[int, float] = {}
        self.reaped = 0

    def scan(self, now: float | None = None) -> list[int]:
        """One pass over /proc; reaps what the rule allows and returns those pids."""
        now = time.monotonic() if now is None else now
        me = os.getpid()
        table = process_table()
        below = descendants(me, table)
        reaped: list[int] = []
        zombies = set()
        for pid, depth in below.items():
            ppid, state = table[pid]
            if depth > 1:
                if pid not in self._foreign:
                    started = _start_time(pid)
                    if started is not None:
                        self._foreign[pid] = started
                continue
            if state != "Z":
                continue
            zombies.add(pid)
            since = self._zombie_since.setdefault(pid, now)
            known = self._foreign.get(pid)
            adopted = known is not None and _start_time(pid) == known
            if adopted or now - since >= self.stale_after:
                try:
                    done, _status = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    done = 0
                if done:
                    reaped.append(pid)
        self._foreign = {p: t for p, t in self._foreign.items() if p in below}
        self._zombie_since = {p: t for p, t in self._zombie_since.items() if p in zombies and p not in reaped}
        self.reaped += len(reaped)
        return reaped


def has_children() -> bool:
    """Whether this process has any child (live or zombie); True when it cannot tell."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return True
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/children", "rb") as handle:
                if handle.read().strip():
                    return True
        except FileNotFoundError:
            continue
        except OSError:
            return True
    return False
