"""The worker's process-tree keeping, each check run in a fresh interpreter (it becomes a subreaper)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from klbr.worker import reaper as reaper_module
from klbr.worker.reaper import Reaper
from test_worker_support import PYTHON_DIR

# Polls /proc until a pid is a zombie (no sleeps the test's outcome depends on).
_WAIT_ZOMBIE = """
def wait_zombie(pid):
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
        if data[data.rfind(b")") + 2 :].split()[0] == b"Z":
            return
        time.sleep(0.005)
    raise AssertionError(f"{pid} never exited")
"""


def run_script(body: str) -> dict:
    script = _WAIT_ZOMBIE + textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-B", "-c", script], cwd=PYTHON_DIR, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_orphans_are_adopted_and_reaped_without_stealing_a_waited_childs_status():
    result = run_script(
        """
        import json, os, signal, subprocess, time
        from klbr.worker.reaper import Reaper, set_child_subreaper, descendants
        assert set_child_subreaper()
        reaper = Reaper(stale_after=3600)
        # sh leaves a grandchild behind and exits 3 once its stdin closes; the cell waits on sh itself.
        sh = subprocess.Popen(["sh", "-c", "sleep 1000 & echo $!; read x; exit 3"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        orphan = int(sh.stdout.readline())
        reaper.scan()                      # sees the orphan-to-be below sh
        seen_below = descendants(os.getpid()).get(orphan)
        early_zombie = subprocess.Popen(["sh", "-c", "exit 5"])
        wait_zombie(early_zombie.pid)
        reaped_early = reaper.scan()       # early_zombie is a zombie nobody waited for yet: kept
        sh.stdin.close()
        status = sh.wait()                 # the cell's own wait gets the real status
        os.kill(orphan, signal.SIGTERM)    # the orphan (now our child) exits
        wait_zombie(orphan)
        reaped = reaper.scan()
        print(json.dumps({"seen_below": seen_below, "status": status, "orphan": orphan, "reaped": reaped,
                          "reaped_early": reaped_early, "early_status": early_zombie.wait()}))
        """
    )
    assert result["seen_below"] == 2
    assert result["status"] == 3
    assert result["reaped_early"] == []
    assert result["early_status"] == 5
    assert result["reaped"] == [result["orphan"]]


def test_stale_zombies_are_reaped_after_the_grace():
    result = run_script(
        """
        import json, subprocess, time
        from klbr.worker.reaper import Reaper
        reaper = Reaper(stale_after=0.2)
        child = subprocess.Popen(["true"])
        wait_zombie(child.pid)
        first = reaper.scan(now=100.0)
        second = reaper.scan(now=100.3)
        print(json.dumps({"first": first, "second": second, "pid": child.pid}))
        """
    )
    assert result["first"] == []
    assert result["second"] == [result["pid"]]


def test_a_new_child_that_reused_an_orphans_pid_is_not_reaped(monkeypatch):
    # pid 200 was seen below child 100 (started at tick 5); later pid 200 is a zombie child of
    # ours that started at tick 9: the cell's own child, which it has not waited for yet.
    me = 10
    tables = iter([
        {100: (me, "S"), 200: (100, "S")},
        {200: (me, "Z")},
    ])
    started = {200: 5}
    waited = []
    monkeypatch.setattr(reaper_module.os, "getpid", lambda: me)
    monkeypatch.setattr(reaper_module, "process_table", lambda: next(tables))
    monkeypatch.setattr(reaper_module, "_start_time", lambda pid: started.get(pid))
    monkeypatch.setattr(reaper_module.os, "waitpid", lambda pid, flags: waited.append(pid) or (pid, 0))
    reaper = Reaper(stale_after=3600)
    assert reaper.scan(now=0.0) == []
    started[200] = 9
    assert reaper.scan(now=1.0) == []
    assert waited == []


def test_kill_descendants_reaches_setsid_grandchildren():
    result = run_script(
        """
        import json, os, subprocess, time
        from klbr.worker.reaper import descendants, kill_descendants, set_child_subreaper
        set_child_subreaper()
        subprocess.Popen(["sleep", "1000"])
        subprocess.run(["sh", "-c", "setsid sleep 1000 >/dev/null 2>&1 & sleep 1000 >/dev/null 2>&1 &"])
        time.sleep(0.2)
        before = sorted(descendants(os.getpid()))
        signalled = kill_descendants()
        after = sorted(descendants(os.getpid()))
        print(json.dumps({"before": before, "signalled": signalled, "after": after}))
        """
    )
    assert len(result["before"]) == 3
    assert result["signalled"] == 3
    assert result["after"] == []
