"""A small fake host for the worker's process-level tests (no tests of its own).

It listens on a Unix socket in a private /tmp directory, spawns ``python -m klbr.worker`` in its
own session, accepts the one connection and speaks the real frame + envelope codecs.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from klbr.envelope import make_envelope, parse_envelope
from klbr.frame import FrameDecoder, encode_frame

__all__ = ["PYTHON_DIR", "SESSION", "GENERATION", "TOKEN", "FakeHost", "alive", "wait_for"]

PYTHON_DIR = Path(__file__).resolve().parents[1]
SESSION = "s-1"
GENERATION = "g-1"
TOKEN = "t0ken-for-tests"


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return False
    return data[data.rfind(b")") + 2 :].split()[0] != b"Z"


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll ``predicate`` until it holds or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


class FakeHost:
    """One worker process and the host end of its socket."""

    def __init__(
        self,
        role: str = "workbench",
        *,
        source: str | None = None,
        skills: str | None = None,
        token: str | None = TOKEN,
        extra_env: dict[str, str] | None = None,
        accept: bool = True,
        token_stdin: bool = False,
        live_output: bool = False,
        identity_stdin: bool = False,
        extra_args: list[str] | None = None,
    ) -> None:
        self.dir = tempfile.mkdtemp(dir="/tmp", prefix="kw")
        self.path = os.path.join(self.dir, "s")
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(self.path)
        self.server.listen(1)
        self.server.settimeout(15)
        argv = [sys.executable, "-B", "-m", "klbr.worker", "--socket", self.path, "--role", role]
        # A warm spare (C19) learns its session and generation on stdin: see ``bind``.
        argv += ["--identity-stdin"] if identity_stdin else ["--session", SESSION, "--generation", GENERATION]
        if source is not None:
            argv += ["--source", source]
        if skills is not None:
            argv += ["--skills", skills]
        if token_stdin:
            argv.append("--token-stdin")
        argv += extra_args or []
        if live_output:
            argv.append("--live-output")
        env = {k: v for k, v in os.environ.items() if k != "KLBR_WORKER_TOKEN"}
        env["PYTHONPATH"] = str(PYTHON_DIR)
        if token is not None and not token_stdin:
            env["KLBR_WORKER_TOKEN"] = token
        env.update(extra_env or {})
        self.stdout_path = os.path.join(self.dir, "stdout")
        self.stderr_path = os.path.join(self.dir, "stderr")
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                argv, cwd=self.dir, env=env, stdin=subprocess.PIPE if token_stdin or identity_stdin else subprocess.DEVNULL,
                stdout=out, stderr=err, start_new_session=True,
            )
        if token_stdin and token is not None:
            assert self.proc.stdin is not None
            self.proc.stdin.write(token.encode() + b"\n")
            self.proc.stdin.flush()
        self.conn: socket.socket | None = None
        self.decoder = FrameDecoder()
        self.backlog: list[dict] = []
        self.hello: dict | None = None
        self._ids = 0
        if accept and not identity_stdin:
            self.accept()

    def accept(self) -> None:
        """Accept the worker's connection and read its ``hello``."""
        self.conn, _ = self.server.accept()
        self.hello = self.recv()

    def bind(self, line: bytes | None = None) -> None:
        """Hand a spare its identity (this host's session and generation), then read its hello.

        A spare connects while it waits (sending nothing): its connection is accepted first.
        """
        assert self.proc.stdin is not None
        if self.conn is None:
            self.conn, _ = self.server.accept()
        self.proc.stdin.write(line if line is not None else f'{{"session_id":"{SESSION}","generation":"{GENERATION}"}}\n'.encode())
        self.proc.stdin.flush()
        if line is None:
            self.hello = self.recv()

    # -- wire --------------------------------------------------------------------------------

    def send(self, message: dict) -> None:
        """Send one message in this worker's envelope."""
        assert self.conn is not None
        self.conn.sendall(encode_frame(make_envelope(SESSION, GENERATION, message)))

    def recv(self, timeout: float = 15.0) -> dict | None:
        """The next message from the worker (validated), or None on EOF."""
        assert self.conn is not None
        if self.backlog:
            return self.backlog.pop(0)
        self.conn.settimeout(timeout)
        while True:
            data = self.conn.recv(1 << 16)
            if not data:
                return None
            values = self.decoder.feed(data)
            if values:
                messages = [parse_envelope(v, SESSION, GENERATION)["message"] for v in values]
                self.backlog.extend(messages[1:])
                return messages[0]

    def new_id(self, prefix: str = "op") -> str:
        self._ids += 1
        return f"{prefix}-{self._ids}"

    def execute(
        self,
        code: str,
        *,
        op_id: str | None = None,
        reply: Callable[[dict], dict] | None = None,
        timeout: float = 15.0,
        on_sent: Callable[[str], None] | None = None,
    ) -> dict:
        """Run one cell, answering its host requests with ``reply(request) -> reply``; returns the result."""
        op_id = op_id or self.new_id()
        self.send({"kind": "execute", "id": op_id, "code": code})
        if on_sent is not None:
            on_sent(op_id)
        return self.until_completed(op_id, reply=reply, timeout=timeout)

    def until_completed(self, op_id: str, *, reply: Callable[[dict], dict] | None = None, timeout: float = 15.0) -> dict:
        """Serve messages until ``completed`` for ``op_id`` arrives; returns its result."""
        self.requests: list[dict] = getattr(self, "requests", [])
        deadline = time.monotonic() + timeout
        while True:
            message = self.recv(max(0.05, deadline - time.monotonic()))
            assert message is not None, f"EOF before the completion of {op_id}"
            if message["kind"] == "host_request":
                self.requests.append(message)
                answer = (reply or default_reply)(message["request"])
                if answer is not None:
                    self.send({"kind": "host_reply", "id": message["id"], "execution_id": message["execution_id"], "reply": answer})
            elif message["kind"] == "completed" and message["id"] == op_id:
                return message["result"]
            else:
                raise AssertionError(f"unexpected message {message!r}")

    # -- process -----------------------------------------------------------------------------

    def stderr(self) -> str:
        return Path(self.stderr_path).read_text(encoding="utf-8", errors="replace")

    def stdout(self) -> str:
        return Path(self.stdout_path).read_text(encoding="utf-8", errors="replace")

    def wait(self, timeout: float = 15.0) -> int:
        return self.proc.wait(timeout)

    def close(self) -> None:
        """Hard stop whatever is left and remove the directory."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        for sock in (self.conn, self.server):
            if sock is not None:
                sock.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "FakeHost":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def default_reply(request: dict) -> dict:
    """Echo the request back as the ok value; runtime.wait gets a C8 wait value."""
    if request["method"] == "runtime.wait":
        return {"kind": "ok", "value": {"wait_id": "w-1", "deadline_ms": None, "pending_input": False}}
    return {"kind": "ok", "value": {"echo": request}}
