"""Issue 10, items 18 and 19: an interrupt right after its execute, and frames only from the worker's pid."""

from __future__ import annotations


import pytest

from klbr.envelope import make_envelope
from klbr.frame import encode_frame
from test_worker_support import GENERATION, SESSION, FakeHost, alive, wait_for


@pytest.fixture
def host():
    with FakeHost() as fake:
        yield fake


def frame(message: dict) -> bytes:
    return encode_frame(make_envelope(SESSION, GENERATION, message))


@pytest.mark.parametrize("code", ["while True:\n    pass", "import time\ntime.sleep(30)"])
def test_an_interrupt_in_the_same_write_as_its_execute_ends_the_cell(host, code):
    # No SIGINT from outside here: only the message rung can end these cells.
    for round in range(5):
        op = f"early-{round}"
        host.conn.sendall(frame({"kind": "execute", "id": op, "code": code}) + frame({"kind": "interrupt", "id": op}))
        result = host.until_completed(op, timeout=10)
        assert result["status"] == "interrupted", result
    assert host.execute("1 + 1")["output"] == [{"stream": "result", "text": "2"}]


def test_an_interrupt_for_the_last_cell_after_it_ended_does_not_touch_the_next(host):
    assert host.execute("x = 1", op_id="a")["status"] == "ok"
    host.send({"kind": "interrupt", "id": "a"})
    assert host.execute("import time\ntime.sleep(0.2)\nx + 1", op_id="b")["output"] == [{"stream": "result", "text": "2"}]


def test_a_forked_child_that_runs_the_cell_on_sends_nothing_and_exits(host):
    result = host.execute("import os, time\npid = os.fork()\nif pid == 0:\n    time.sleep(0.3)\npid")
    child = int(result["output"][0]["text"])
    assert child > 0
    assert wait_for(lambda: not alive(child), 5)
    # Anything the child had sent would be here before the next completion.
    assert host.execute("'next'")["output"] == [{"stream": "result", "text": "'next'"}]


def test_a_cell_that_closes_the_socket_fd_ends_the_worker(host):
    host.send({"kind": "execute", "id": "c", "code": "import os, stat\nfor fd in os.listdir('/proc/self/fd'):\n    try:\n        if stat.S_ISSOCK(os.fstat(int(fd)).st_mode): os.close(int(fd))\n    except OSError: pass"})
    assert host.wait(10) == 2
    assert "connection is unusable" in host.stderr()
