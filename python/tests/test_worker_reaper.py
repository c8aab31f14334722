"""The worker's process-tree keeping, each check run in a fresh interpreter (it becomes a subreaper)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from test_worker_support import PYTHON_DIR


def run_script(body: str) -> dict:
    script = textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-B", "-c", script], cwd=PYTHON_DIR, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_orphans_are_adopted_and_reaped_without_stealing_a_waited_childs_status():
    result = run_script(
        """
        import json, os, subprocess, time
        from klbr.worker.reaper import Reaper, set_child_subreaper, descendants
        assert set_child_subreaper()
        reaper = Reaper(stale_after=3600)
        # sh leaves a grandchild behind and exits 3; the cell waits on sh itself.
        sh = subprocess.Popen(["sh", "-c", "sleep 0.6 & echo $!; sleep 0.3; exit 3"], stdout=subprocess.PIPE, text=True)
        orphan = int(sh.stdout.readline())
        time.sleep(0.1)
        reaper.scan()                      # sees the orphan-to-be below sh
        seen_below = descendants(os.getpid()).get(orphan)
        early_zombie = subprocess.Popen(["sh", "-c", "exit 5"])
        time.sleep(0.3)
        reaped_early = reaper.scan()       # early_zombie is a zombie nobody waited for yet: kept
        status = sh.wait()                 # the cell's own wait gets the real status
        time.sleep(0.6)                    # the orphan (now our child) exits
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
        time.sleep(0.2)
        first = reaper.scan()
        time.sleep(0.3)
        second = reaper.scan()
        print(json.dumps({"first": first, "second": second, "pid": child.pid}))
        """
    )
    assert result["first"] == []
    assert result["second"] == [result["pid"]]


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
