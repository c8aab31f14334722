"""``python -m klbr.worker --token-stdin``: the keeper a remote worker runs under, as real processes."""

from __future__ import annotations

import os
import re
import signal

import pytest

from klbr.worker.keeper import KEEPER_PID_PREFIX
from test_worker_support import TOKEN, FakeHost, alive, wait_for

# A cell that starts a grandchild in its own session (out of the worker's group) and reports its pid.
ESCAPEE = (
    "import subprocess\n"
    "p = subprocess.Popen(['sleep', '600'], start_new_session=True)\n"
    "p.pid"
)


def worker_pid(host: FakeHost) -> int:
    assert wait_for(lambda: KEEPER_PID_PREFIX in host.stdout())
    match = re.search(re.escape(KEEPER_PID_PREFIX) + r"(\d+) python=3\.\d+\.\d+\n", host.stdout())
    assert match, host.stdout()
    return int(match.group(1))


def result_text(result: dict) -> str:
    assert result["kind"] == "cell" and result["status"] == "ok", result
    return result["output"][-1]["text"]


@pytest.fixture
def kept():
    with FakeHost(token_stdin=True) as fake:
        yield fake


def test_the_token_comes_from_stdin_and_the_worker_is_a_child(kept):
    assert kept.hello is not None and kept.hello["token"] == TOKEN
    pid = worker_pid(kept)
    assert pid != kept.proc.pid
    with open(f"/proc/{pid}/stat", "rb") as handle:
        stat = handle.read()
    assert int(stat[stat.rfind(b")") + 2 :].split()[1]) == kept.proc.pid
    # Not in the keeper's argv, nor the worker's, nor the cell's environment.
    with open(f"/proc/{kept.proc.pid}/cmdline", "rb") as handle:
        assert TOKEN.encode() not in handle.read()
    out = result_text(kept.execute("import os\n(os.getpid(), os.environ.get('KLBR_WORKER_TOKEN'))"))
    assert out == f"({pid}, None)"


def test_the_int_line_is_the_sigint_rung(kept):
    op = kept.new_id()
    kept.send({"kind": "execute", "id": op, "code": "while True:\n    pass"})
    # The loop never awaits, so only SIGINT can stop it; repeat until the cell is in its code.
    result = None
    for _ in range(200):
        kept.proc.stdin.write(b"int\n")
        kept.proc.stdin.flush()
        try:
            message = kept.recv(0.1)
        except TimeoutError:
            message = None
        if message is not None:
            assert message["kind"] == "completed" and message["id"] == op
            result = message["result"]
            break
    assert result is not None and result["status"] == "interrupted", result
    assert result_text(kept.execute("1 + 1")) == "2"


def test_end_of_stdin_kills_the_whole_tree_and_removes_the_socket(kept):
    pid = worker_pid(kept)
    escapee = int(result_text(kept.execute(ESCAPEE)))
    assert alive(escapee)
    kept.proc.stdin.close()
    assert kept.wait() == 137
    assert not alive(pid) and not alive(escapee)
    assert not os.path.exists(kept.path)


def test_the_kill_line_is_the_hard_stop(kept):
    escapee = int(result_text(kept.execute(ESCAPEE)))
    kept.proc.stdin.write(b"kill\n")
    kept.proc.stdin.flush()
    assert kept.wait() == 137
    assert not alive(escapee)


def test_a_worker_killed_from_outside_takes_its_tree_and_the_keeper_with_it(kept):
    pid = worker_pid(kept)
    escapee = int(result_text(kept.execute(ESCAPEE)))
    os.kill(pid, signal.SIGKILL)
    assert kept.recv(10) is None  # the connection ends with the worker
    assert kept.wait() == 128 + signal.SIGKILL
    assert not alive(escapee)


def test_shutdown_ends_the_keeper_with_the_workers_status(kept):
    escapee = int(result_text(kept.execute(ESCAPEE)))
    kept.send({"kind": "shutdown"})
    assert kept.wait() == 0
    assert not alive(escapee)


def test_no_token_line_is_a_startup_failure():
    with FakeHost(token_stdin=True, token=None, accept=False) as fake:
        fake.proc.stdin.close()
        assert fake.wait() == 1
        assert "WORKER_TOKEN_MISSING" in fake.stderr()


LIMITS = '{"rlimits": {"FSIZE": [1048576, 1048576], "CPU": [30, 31]}}'


def test_the_keeper_sets_the_hosts_limits_as_rlimits_of_the_worker_not_its_own():
    with FakeHost(token_stdin=True, extra_args=["--limits", LIMITS]) as fake:
        text = result_text(fake.execute("import resource\n(resource.getrlimit(resource.RLIMIT_FSIZE), resource.getrlimit(resource.RLIMIT_CPU))"))
        assert text == "((1048576, 1048576), (30, 31))"
        # A write past the file limit is EFBIG, an ordinary error the worker survives.
        done = fake.execute("f = open('big', 'wb')\nf.write(b'x' * (2 << 20))")
        assert done["status"] == "error" and "File too large" in done["error"], done
        with open(f"/proc/{fake.proc.pid}/limits") as handle:
            keeper = handle.read()
        assert re.search(r"Max file size\s+unlimited", keeper), keeper


def test_procs_cannot_bind_root_so_a_root_keeper_refuses_to_start():
    limits = '{"rlimits": {"NPROC": [64, 64]}}'
    with FakeHost(token_stdin=True, extra_args=["--limits", limits], accept=os.getuid() != 0) as fake:
        if os.getuid() == 0:
            assert fake.wait() == 1
            assert "LIMITS_UNAVAILABLE" in fake.stderr()
        else:
            assert "64" in result_text(fake.execute("import resource\nresource.getrlimit(resource.RLIMIT_NPROC)"))
