"""A warm spare (``--identity-stdin``, C19): started, waiting for its identity, then a worker like any."""

from __future__ import annotations

import os
import socket

import pytest

from klbr.worker.main import parse_args
from test_worker_support import GENERATION, SESSION, FakeHost, wait_for


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def test_a_spare_is_connected_and_serving_before_its_identity_but_sends_nothing_until_bound():
    with FakeHost(identity_stdin=True) as host:
        # Started and waiting: connected, its threads up (main, reader, kicker), and silent.
        host.conn, _ = host.server.accept()
        assert wait_for(lambda: _threads(host.proc.pid) >= 3)
        host.conn.settimeout(0.3)
        with pytest.raises(socket.timeout):
            host.conn.recv(1)
        assert host.proc.poll() is None
        host.bind()
        # Its first envelope (FakeHost checks each one) names the session it was given.
        assert host.hello is not None and host.hello["role"] == "workbench"
        result = host.execute("x = 40\nx + 2")
        assert result["kind"] == "cell" and result["output"] == [{"stream": "result", "text": "42"}]
        # The cell's stdin is not the host's pipe.
        result = host.execute("import os; os.read(0, 10)")
        assert result["output"] == [{"stream": "result", "text": "b''"}]


def test_a_dropped_spare_exits_0_without_a_word():
    with FakeHost(identity_stdin=True) as host:
        assert host.proc.stdin is not None
        host.conn, _ = host.server.accept()
        host.proc.stdin.close()
        assert wait_for(lambda: host.proc.poll() is not None)
        assert host.proc.returncode == 0
        host.conn.settimeout(5)
        assert host.conn.recv(1) == b""


@pytest.mark.parametrize(
    "line, says",
    [
        (b'{"session_id":"s 1","generation":"g-1"}\n', "is not an identifier"),
        (b'{"session_id":"s-1"}\n', "must be"),
        (b"not json\n", "not JSON"),
        (b'{"session_id":"' + b"s" * 600 + b'","generation":"g"}\n', "longer than 512 bytes"),
    ],
)
def test_a_bad_identity_line_fails_startup_with_one_line(line, says):
    with FakeHost(identity_stdin=True) as host:
        host.bind(line)
        assert wait_for(lambda: host.proc.poll() is not None)
        assert host.proc.returncode == 1
        with open(host.stderr_path, encoding="utf-8") as handle:
            err = handle.read()
        assert err.startswith("klbr.worker: WORKER_IDENTITY_INVALID") and says in err and err.count("\n") == 1


def test_identity_stdin_excludes_session_and_generation_flags():
    with pytest.raises(SystemExit):
        parse_args(["--socket", "s", "--role", "workbench", "--identity-stdin", "--session", SESSION])
    with pytest.raises(SystemExit):
        parse_args(["--socket", "s", "--role", "workbench", "--generation", GENERATION])
    assert parse_args(["--socket", "s", "--role", "workbench", "--identity-stdin"]).identity_stdin
