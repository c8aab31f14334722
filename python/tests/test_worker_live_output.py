"""C16 live output: ``python -m klbr.worker --live-output`` against a fake host, as real processes.

Timing-dependent cases synchronise on events: the cell blocks until a file exists, and the test
creates that file only after it has read the cell's output. The pacing bound is checked as an
inequality that a slower machine only loosens (messages <= 20/s of the cell's observed run + 1).
"""

from __future__ import annotations

import os
import time

import pytest

from klbr.envelope import MAX_LIVE_OUTPUT_TEXT_BYTES, OutputSequence
from test_worker_support import FakeHost, wait_for


@pytest.fixture
def host():
    with FakeHost(live_output=True) as fake:
        yield fake


@pytest.fixture
def plain():
    with FakeHost() as fake:
        yield fake


class Run:
    """One cell on a live worker: its output messages (checked by OutputSequence) and its result."""

    def __init__(self, host: FakeHost, code: str, sequence: OutputSequence | None = None) -> None:
        self.host = host
        self.id = host.new_id()
        self.sequence = sequence or OutputSequence(True)
        self.outputs: list[dict] = []
        self.result: dict | None = None
        message = {"kind": "execute", "id": self.id, "code": code}
        self.sequence.sent(message)
        self.started = time.monotonic()
        host.send(message)

    def next_output(self, timeout: float = 15.0) -> dict:
        """The next output message; fails if the cell completes first."""
        message = self._next(timeout)
        assert message["kind"] == "output", f"expected an output, got {message!r}"
        return message

    def until_text(self, needle: str, timeout: float = 15.0) -> str:
        """Read output messages until their text holds ``needle``; returns the text so far."""
        while needle not in self.text():
            self.next_output(timeout)
        return self.text()

    def finish(self, timeout: float = 60.0) -> dict:
        """Read to the completion; returns its result."""
        while self.result is None:
            self._next(timeout)
        self.elapsed = time.monotonic() - self.started
        return self.result

    def text(self, stream: str | None = None) -> str:
        return "".join(m["text"] for m in self.outputs if stream is None or m["stream"] == stream)

    def sent_bytes(self) -> int:
        return sum(len(m["text"].encode()) for m in self.outputs)

    def dropped(self) -> int:
        return sum(m["dropped_bytes"] for m in self.outputs)

    def _next(self, timeout: float) -> dict:
        assert self.result is None, "the cell completed already"
        message = self.host.recv(timeout)
        assert message is not None, "EOF from the worker"
        self.sequence.received(message)  # raises on any C16 sequence rule broken
        if message["kind"] == "output":
            assert message["id"] == self.id
            assert 1 <= len(message["text"].encode()) <= MAX_LIVE_OUTPUT_TEXT_BYTES
            self.outputs.append(message)
        elif message["kind"] == "completed":
            assert message["id"] == self.id
            self.result = message["result"]
        else:
            raise AssertionError(f"unexpected message {message!r}")
        return message


def gate(host: FakeHost, name: str) -> tuple[str, str]:
    """A path the cell waits for and the code that waits for it (without the loop's help)."""
    path = os.path.join(host.dir, name)
    wait = f"import os, time\nwhile not os.path.exists({path!r}):\n    time.sleep(0.005)\n"
    return path, wait


def release(path: str) -> None:
    with open(path, "w"):
        pass


def test_a_cell_that_prints_nothing_sends_no_output(host):
    for code in ("1+1", "x = 5", "'text only as a result'", "raise ValueError('no output')"):
        run = Run(host, code)
        run.finish()
        assert run.outputs == []


def test_a_line_arrives_while_the_cell_is_still_running(host):
    path, wait = gate(host, "go")
    run = Run(host, f"print('line 1')\n{wait}print('line 2')")
    first = run.next_output()
    # The cell is blocked until the file exists, and it does not yet: this line came live.
    assert not os.path.exists(path)
    assert first == {"kind": "output", "id": run.id, "seq": 0, "stream": "stdout", "text": "line 1\n", "dropped_bytes": 0}
    release(path)
    result = run.finish()
    assert result["output"] == [{"stream": "stdout", "text": "line 1\nline 2\n"}]
    assert run.text() == "line 1\nline 2\n"


def test_a_partial_line_is_sent_without_its_line_end(host):
    path, wait = gate(host, "go")
    run = Run(host, f"import sys\nsys.stdout.write('50%')\n{wait}print(' done')")
    assert run.next_output()["text"] == "50%"  # sent after its linger, the cell still blocked
    release(path)
    run.finish()
    assert run.text() == "50% done\n"


def test_stdout_and_stderr_keep_their_streams_and_order(host):
    path, wait = gate(host, "go")
    run = Run(host, f"import sys\nprint('out 1')\nprint('err 1', file=sys.stderr)\nprint('out 2')\n{wait}")
    run.until_text("out 2")
    release(path)
    result = run.finish()
    assert [(m["stream"], m["text"]) for m in run.outputs] == [
        ("stdout", "out 1\n"), ("stderr", "err 1\n"), ("stdout", "out 2\n"),
    ]
    assert result["output"] == [
        {"stream": "stdout", "text": "out 1\n"}, {"stream": "stderr", "text": "err 1\n"}, {"stream": "stdout", "text": "out 2\n"},
    ]


def test_a_threads_output_streams_while_the_cell_blocks(host):
    path, wait = gate(host, "go")
    run = Run(host, f"import threading\nthreading.Thread(target=print, args=('from a thread',)).start()\n{wait}")
    assert run.until_text("from a thread") == "from a thread\n"
    assert not os.path.exists(path)
    release(path)
    assert run.finish()["output"] == [{"stream": "stdout", "text": "from a thread\n"}]


def test_a_tasks_output_streams_while_the_cell_awaits(host):
    path = os.path.join(host.dir, "go")
    run = Run(
        host,
        "import asyncio, os\n"
        "async def chatter():\n"
        "    print('from a task')\n"
        f"task = asyncio.create_task(chatter())\n"
        f"while not os.path.exists({path!r}):\n"
        "    await asyncio.sleep(0.005)\n"
        "await task",
    )
    assert run.until_text("from a task") == "from a task\n"
    release(path)
    assert run.finish()["output"] == [{"stream": "stdout", "text": "from a task\n"}]


def test_a_forked_childs_output_is_not_sent(host):
    run = Run(
        host,
        "import os, sys\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    print('from the child'); sys.stdout.flush()\n"
        "    print('child err', file=sys.stderr)\n"
        "    os._exit(0)\n"
        "os.waitpid(pid, 0)\n"
        "print('from the parent')",
    )
    result = run.finish()
    assert run.text() == "from the parent\n"
    assert result["output"] == [{"stream": "stdout", "text": "from the parent\n"}]
    # The worker still serves, and still streams.
    again = Run(host, "print('after')")
    again.finish()
    assert again.text() == "after\n"


def test_the_completion_record_is_the_same_with_and_without_live_output(host, plain):
    cells = [
        "print('a'); print('b')",
        "import sys\nfor i in range(300):\n    print(i, file=sys.stderr if i % 2 else sys.stdout)",
        "print('€' * 30000)",
        "import sys\nsys.stdout.buffer.write(b'\\xe2\\x82')\nsys.stdout.buffer.write(b'\\xac!\\n')",
        "print('x' * 70000)\nraise RuntimeError('after output')",
        "import sys\nsys.stdout.write('a\\ud800b')",
        "6 * 7",
    ]
    for code in cells:
        run = Run(host, code)
        live = run.finish()
        expected = plain.execute(code)
        assert live == expected, code
        # Everything written is either sent or counted as dropped (the result record is neither).
        written = sum(len(r["text"].encode()) for r in live["output"] if r["stream"] != "result")
        if live["truncated_bytes"] == 0 and live["error"] is None:
            assert run.sent_bytes() + run.dropped() == written, code


def test_text_is_cut_on_character_boundaries_and_drops_are_counted(host):
    run = Run(host, "print('€' * 30000)")
    run.finish()
    total = 3 * 30000 + 1
    assert run.sent_bytes() + run.dropped() == total
    assert set(run.text()) <= {"€", "\n"}
    assert run.outputs[0]["text"] == "€" * (MAX_LIVE_OUTPUT_TEXT_BYTES // 3)


def test_a_message_holds_exactly_16384_bytes_and_the_rest_is_sent_later_or_counted(host):
    run = Run(host, "print('x' * 16_385)")
    run.finish()
    assert run.outputs[0]["text"] == "x" * 16_384
    assert run.sent_bytes() + run.dropped() == 16_386
    # What follows is the last "x" and the newline, each sent in a later message or dropped.
    assert run.text()[16_384:] in ("", "x", "\n", "x\n")


def test_a_200_mib_print_is_paced_bounded_and_counted(host):
    before = _peak_rss(host.proc.pid)
    run = Run(
        host,
        "chunk = 'x' * (1 << 20)\n"
        "for _ in range(200):\n"
        "    print(chunk)\n"
        "del chunk",
    )
    result = run.finish(timeout=180)
    assert result["status"] == "ok"
    total = 200 * ((1 << 20) + 1)
    assert sum(len(r["text"]) for r in result["output"]) + result["truncated_bytes"] == total
    assert run.sent_bytes() + run.dropped() == total
    assert run.dropped() > 0
    # At most 20 messages a second of the cell's run, as the host saw it (a slow machine only loosens it).
    assert len(run.outputs) <= 20 * run.elapsed + 1
    assert _peak_rss(host.proc.pid) - before < 32 << 20


def test_a_chatty_cell_is_paced_and_ends_with_all_its_output_before_completed(host):
    run = Run(host, "for i in range(20000):\n    print(i)")
    run.finish()
    written = sum(len(f"{i}\n") for i in range(20000))
    assert run.sent_bytes() + run.dropped() == written
    assert len(run.outputs) <= 20 * run.elapsed + 1
    assert run.text().startswith("0\n1\n2\n")


def test_interrupt_mid_stream_ends_the_stream_before_the_completion(host):
    run = Run(host, "import itertools\nfor i in itertools.count():\n    print(i)")
    run.next_output()
    host.send({"kind": "interrupt", "id": run.id})
    result = run.finish()
    assert result["status"] == "interrupted"
    assert run.text().startswith("0\n")
    # A next cell streams from seq 0 again.
    again = Run(host, "print('next')", run.sequence)
    again.finish()
    assert [m["seq"] for m in again.outputs] == [0]


def test_output_written_by_a_thread_after_its_cell_ended_is_not_sent(host):
    path, _ = gate(host, "go")
    first = Run(
        host,
        "import os, threading, time\n"
        "def late():\n"
        f"    while not os.path.exists({path!r}):\n"
        "        time.sleep(0.005)\n"
        "    print('late')\n"
        "threading.Thread(target=late).start()",
    )
    first.finish()
    release(path)
    assert wait_for(lambda: "late" in host.stdout())  # the real stream, as without live output
    second = Run(host, "print('second')", first.sequence)
    second.finish()
    assert second.text() == "second\n"


def test_live_output_is_refused_for_the_hooks_role():
    with FakeHost("hooks", live_output=True, accept=False) as fake:
        assert fake.wait() == 1
        assert "--live-output is only for the workbench role" in fake.stderr()


def test_without_the_flag_nothing_is_streamed(plain):
    # A live worker sends every output of a cell before its completed, so a wrong one would show here.
    run = Run(plain, "print('hi')\nimport sys\n_ = sys.stdout.write('partial')", OutputSequence(False))
    assert run.finish()["output"] == [{"stream": "stdout", "text": "hi\npartial"}]
    assert run.outputs == []


def _peak_rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")
