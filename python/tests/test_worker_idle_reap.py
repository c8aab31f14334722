"""An idle worker with no child does not wake up (issue 23, sessions at scale).

At 500 sessions every idle workbench scanned its process tree once a second: 500 wake-ups a second
for nothing, a quarter of a core on a 2-core machine. Idle and childless, the worker now waits for
a child's exit (its SIGCHLD, when the main thread gets it), the next operation, or a 10 s backstop.
"""

from __future__ import annotations

import time

import pytest

from test_worker_support import FakeHost, wait_for


@pytest.fixture
def host():
    with FakeHost() as fake:
        yield fake


def wakeups(pid: int) -> int:
    """Voluntary context switches of the worker's main thread: each wait it returned from."""
    with open(f"/proc/{pid}/task/{pid}/status") as handle:
        for line in handle:
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
    raise AssertionError("no voluntary_ctxt_switches line")


def quiet_for(pid: int, seconds: float, timeout: float) -> bool:
    """Whether, within ``timeout`` seconds, the main thread stays asleep for ``seconds`` in a row."""
    deadline = time.monotonic() + timeout
    last, since = wakeups(pid), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = wakeups(pid)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= seconds:
            return True
    return False


def test_an_idle_childless_worker_stays_asleep(host):
    assert host.execute("1 + 1")["status"] == "ok"
    # The scan after the cell finds no child and no operation; from then on nothing wakes it
    # (a scan every second would be two or three wake-ups in any 2.5 s).
    assert quiet_for(host.proc.pid, 2.5, timeout=10)

