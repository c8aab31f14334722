"""``python -m klbr.worker --role workbench`` against a fake host, as real processes."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

import klbr
from klbr.frame import encode_frame
from test_worker_support import TOKEN, FakeHost, alive, wait_for


@pytest.fixture
def host():
    with FakeHost() as fake:
        yield fake


def cell_ok(result: dict) -> list[dict]:
    assert result["kind"] == "cell", result
    assert result["status"] == "ok", result
    return result["output"]


def test_hello_and_the_token_is_gone_from_the_environment(host):
    assert host.hello == {
        "kind": "hello", "token": TOKEN, "role": "workbench", "revision": None, "slots": [], "skills": None,
        "runtime_version": klbr.__version__,
    }
    out = cell_ok(host.execute(
        "import os, subprocess\n"
        "child = subprocess.run(['env'], capture_output=True, text=True).stdout\n"
        "(os.environ.get('KLBR_WORKER_TOKEN'), 'KLBR_WORKER_TOKEN' in child)"
    ))
    assert out == [{"stream": "result", "text": "(None, False)"}]


def test_namespace_underscore_and_output_records(host):
    cell_ok(host.execute("x = 41"))
    assert cell_ok(host.execute("x + 1")) == [{"stream": "result", "text": "42"}]
    out = cell_ok(host.execute("import sys\nprint('a'); print('b')\nprint('e', file=sys.stderr)\n_ * 2"))
    assert out == [
        {"stream": "stdout", "text": "a\nb\n"},
        {"stream": "stderr", "text": "e\n"},
        {"stream": "result", "text": "84"},
    ]
    assert cell_ok(host.execute("None")) == []
    assert cell_ok(host.execute("_")) == [{"stream": "result", "text": "84"}]


def test_an_unfinished_utf8_sequence_on_stdout_buffer_stays_in_its_cell(host):
    euro = "€".encode("utf-8")
    out = cell_ok(host.execute(f"import sys\nsys.stdout.buffer.write(b'a' + {euro[:2]!r})\nNone"))
    assert out == [{"stream": "stdout", "text": "a\ufffd"}]
    out = cell_ok(host.execute(f"import sys\nsys.stdout.buffer.write({euro[2:]!r} + b'b')\nNone"))
    assert out == [{"stream": "stdout", "text": "\ufffdb"}]


def test_top_level_await_and_asyncio_run_explained(host):
    assert cell_ok(host.execute("import asyncio\nawait asyncio.sleep(0.01, result='slept')")) == [
        {"stream": "result", "text": "'slept'"}
    ]
    result = host.execute("import asyncio\nasync def f():\n    return 1\nasyncio.run(f())")
    assert result["status"] == "error"
    assert "asyncio.run() cannot be called from a running event loop" in result["error"]


def test_an_exception_gives_error_with_the_cells_traceback(host):
    result = host.execute("print('before')\ndef boom():\n    raise ValueError('bad value 7')\nboom()")
    assert result["status"] == "error"
    assert result["output"] == [{"stream": "stdout", "text": "before\n"}]
    error = result["error"]
    assert error.startswith("Traceback (most recent call last):\n")
    assert "line 4" in error and "raise ValueError('bad value 7')" in error
    assert "klbr" not in error
    assert error.rstrip().endswith("ValueError: bad value 7")
    syntax = host.execute("def (:")
    assert syntax["status"] == "error" and "SyntaxError" in syntax["error"]
    exit_cell = host.execute("raise SystemExit(3)")
    assert exit_cell["status"] == "error" and "SystemExit" in exit_cell["error"]
    assert cell_ok(host.execute("'still alive'"))


def test_output_limits_and_a_200_mib_print_stay_bounded(host):
    before = _peak_rss(host.proc.pid)
    result = host.execute(
        "chunk = 'x' * (1 << 20)\n"
        "for _ in range(200):\n"
        "    print(chunk)\n"
        "del chunk",
        timeout=120,
    )
    assert result["status"] == "ok"
    kept = sum(len(r["text"].encode()) for r in result["output"])
    assert kept == 65_536
    assert kept + result["truncated_bytes"] == 200 * ((1 << 20) + 1)
    assert _peak_rss(host.proc.pid) - before < 32 << 20
    many = host.execute("import sys\nfor i in range(300):\n    print(i, file=sys.stderr if i % 2 else sys.stdout)")
    assert len(many["output"]) == 256
    assert many["truncated_bytes"] == sum(len(f"{i}\n") for i in range(256, 300))
    multibyte = host.execute("print('€' * 30000)")
    text = multibyte["output"][0]["text"]
    assert text == "€" * 21845 and multibyte["truncated_bytes"] == 3 * 30000 + 1 - 65535


def _peak_rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def test_host_requests_concurrent_errors_and_the_limit(host):
    def reply(request):
        if request["method"] == "skills.load":
            return {"kind": "error", "code": "not_found", "message": f"no skill {request['id']!r}"}
        return {"kind": "ok", "value": request.get("refs")}

    out = cell_ok(host.execute(
        "import asyncio\n"
        "await asyncio.gather(*(runtime.resolve([f'event:{i}']) for i in range(4)))",
        reply=reply,
    ))
    assert out == [{"stream": "result", "text": "[['event:0'], ['event:1'], ['event:2'], ['event:3']]"}]
    out = cell_ok(host.execute(
        "from klbr.runtime import HostError\n"
        "try:\n    await runtime.skills_load('ghost')\n"
        "except HostError as e:\n    caught = (e.code, e.message)\ncaught",
        reply=reply,
    ))
    assert out == [{"stream": "result", "text": "('not_found', \"no skill 'ghost'\")"}]
    host.requests = []
    out = cell_ok(host.execute(
        "from klbr.runtime import HostError\n"
        "for i in range(128):\n    await runtime.inspect()\n"
        "try:\n    await runtime.inspect()\nexcept HostError as e:\n    code = e.code\ncode"
    ))
    assert out == [{"stream": "result", "text": "'limit_exceeded'"}]
    assert len(host.requests) == 128


def test_wait_yields_and_later_requests_are_refused_locally(host):
    host.requests = []
    result = host.execute(
        "import asyncio\n"
        "waited = asyncio.Event()\n"
        "async def later():\n"
        "    await waited.wait()\n"
        "    try:\n        await runtime.send('from the background')\n"
        "    except Exception as e:\n        print('background:', type(e).__name__, e.code)\n"
        "task = asyncio.create_task(later())\n"
        "try:\n    await runtime.wait(30, reason='input')\n"
        "except BaseException:\n    print('caught the sentinel')\n"
        "print('after the wait')\n"
        "waited.set()\n"
        "await task\n"
    )
    assert result["status"] == "yielded"
    assert result["error"] is None
    assert [r["request"]["method"] for r in host.requests] == ["runtime.wait"]
    assert result["output"] == [
        {"stream": "stdout", "text": "caught the sentinel\nafter the wait\nbackground: HostError scope_expired\n"}
    ]
    assert cell_ok(host.execute("1"))  # the next cell has its own scope


def test_a_second_execute_while_one_runs_fails(host):
    host.send({"kind": "execute", "id": "long", "code": "import asyncio\nawait asyncio.sleep(0.5)\n'done'"})
    host.send({"kind": "execute", "id": "second", "code": "1"})
    second = host.recv()
    assert second["kind"] == "completed" and second["id"] == "second"
    assert second["result"]["kind"] == "failed" and "long" in second["result"]["error"]
    assert cell_ok(host.until_completed("long")) == [{"stream": "result", "text": "'done'"}]


def started(host, name: str) -> None:
    """Wait until the cell created ``name`` in the worker's directory (it runs its own code)."""
    assert wait_for(lambda: os.path.exists(os.path.join(host.dir, name)), 15), f"the cell never made {name}"


def interrupted_once_blocked(host, op_id: str, code: str) -> None:
    """Run ``code`` (it makes ``blocked`` once SIGINT is masked), interrupt it then: it ends interrupted."""
    host.send({"kind": "execute", "id": op_id, "code": code})
    started(host, "blocked")
    host.send({"kind": "interrupt", "id": op_id})
    assert host.until_completed(op_id, timeout=30)["status"] == "interrupted"


def test_interrupt_cancels_an_awaiting_cell(host):
    # The request proves the cell printed; the interrupt then lands while it awaits, whatever the load.
    host.send({
        "kind": "execute", "id": "sleepy",
        "code": "import asyncio\nprint('start')\nawait runtime.inspect()\nawait asyncio.sleep(60)",
    })
    request = host.recv()
    assert request["kind"] == "host_request"
    host.send({"kind": "host_reply", "id": request["id"], "execution_id": "sleepy", "reply": {"kind": "ok", "value": 1}})
    host.send({"kind": "interrupt", "id": "not-running"})  # ignored
    host.send({"kind": "interrupt", "id": "sleepy"})
    result = host.until_completed("sleepy")
    assert result["status"] == "interrupted"
    assert result["output"] == [{"stream": "stdout", "text": "start\n"}]


def test_interrupt_breaks_a_pure_python_loop(host):
    host.send({"kind": "execute", "id": "busy", "code": "n = 0\nopen('looping', 'w').close()\nwhile True:\n    n += 1"})
    started(host, "looping")
    host.send({"kind": "interrupt", "id": "busy"})
    assert host.until_completed("busy")["status"] == "interrupted"
    assert cell_ok(host.execute("n >= 0")) == [{"stream": "result", "text": "True"}]


def test_a_kick_that_did_not_land_is_sent_again(host):
    # The cell takes the interrupt's SIGINT itself (sigwait), as a signal that arrives just before
    # the main thread blocks in a system call is never handled in time: the worker must kick again.
    code = (
        "import signal, time\n"
        "signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])\n"
        "open('blocked', 'w').close()\n"
        "signal.sigwait([signal.SIGINT])\n"
        "open('taken', 'w').close()\n"
        "signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])\n"
        "time.sleep(60)"
    )
    interrupted_once_blocked(host, "swallowed", code)
    assert os.path.exists(os.path.join(host.dir, "taken"))


def test_sigint_interrupts_time_sleep_and_event_wait_and_is_ignored_otherwise(host):
    os.kill(host.proc.pid, signal.SIGINT)  # idle: ignored
    assert cell_ok(host.execute("'idle sigint ignored'"))
    for name, code in (("sleeping", "import time\ntime.sleep(60)"), ("waiting", "import threading\nthreading.Event().wait()")):
        op = host.new_id()
        host.send({"kind": "execute", "id": op, "code": f"open({name!r}, 'w').close()\n{code}"})
        started(host, name)  # a SIGINT before the cell ran would be ignored (idle)
        os.kill(host.proc.pid, signal.SIGINT)
        assert host.until_completed(op)["status"] == "interrupted"
    # During an await the loop is not in cell code: SIGINT is ignored there. The cell awaits its
    # request's reply, which is sent only after the SIGINT.
    host.send({"kind": "execute", "id": "awaiting", "code": "await runtime.inspect()\n'finished'"})
    request = host.recv()
    assert request["kind"] == "host_request"
    os.kill(host.proc.pid, signal.SIGINT)
    host.send({"kind": "host_reply", "id": request["id"], "execution_id": "awaiting", "reply": {"kind": "ok", "value": 1}})
    assert cell_ok(host.until_completed("awaiting")) == [{"stream": "result", "text": "'finished'"}]


def test_a_late_reply_after_interrupt_is_discarded(host):
    host.send({"kind": "execute", "id": "asks", "code": "await runtime.inspect()"})
    request = host.recv()
    assert request["kind"] == "host_request"
    host.send({"kind": "interrupt", "id": "asks"})
    assert host.until_completed("asks")["status"] == "interrupted"
    host.send({"kind": "host_reply", "id": request["id"], "execution_id": "asks", "reply": {"kind": "ok", "value": 1}})
    out = cell_ok(host.execute("await runtime.inspect()", reply=lambda r: {"kind": "ok", "value": "fresh"}))
    assert out == [{"stream": "result", "text": "'fresh'"}]


def test_background_output_after_its_cell_is_not_in_the_next_cell(host):
    cell_ok(host.execute(
        "import asyncio\n"
        "async def chatter():\n"
        "    await asyncio.sleep(0.2)\n"
        "    print('late chatter')\n"
        "bg = asyncio.create_task(chatter())"
    ))
    out = cell_ok(host.execute("import asyncio\nawait asyncio.sleep(0.5)\nprint('mine')"))
    assert out == [{"stream": "stdout", "text": "mine\n"}]
    assert wait_for(lambda: "late chatter" in host.stdout())


def test_thread_output_during_a_cell_is_captured(host):
    out = cell_ok(host.execute(
        "import threading\nt = threading.Thread(target=print, args=('from a thread',))\nt.start(); t.join()"
    ))
    assert out == [{"stream": "stdout", "text": "from a thread\n"}]


def test_os_exit_in_a_cell_ends_the_worker_without_a_completion(host):
    host.send({"kind": "execute", "id": "bye", "code": "import os\nos._exit(7)"})
    assert host.recv() is None
    assert host.wait() == 7


def test_shutdown_exits_zero_and_sends_nothing_more(host):
    host.send({"kind": "execute", "id": "running", "code": "import asyncio\nawait asyncio.sleep(60)"})
    time.sleep(0.1)
    host.send({"kind": "shutdown"})
    assert host.recv() is None
    assert host.wait() == 0


def test_eof_makes_the_worker_exit_even_during_a_busy_cell(host):
    host.send({"kind": "execute", "id": "busy", "code": "while True:\n    pass"})
    time.sleep(0.2)
    host.conn.close()
    host.conn = None
    assert host.wait(10) == 0


def test_a_bad_frame_from_the_host_is_a_protocol_error(host):
    host.conn.sendall(b"\x00\x00\x00\x02{{")
    assert host.recv() is None
    assert host.wait() == 2
    lines = host.stderr().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("klbr.worker: protocol error: FRAME_")


def test_a_wrong_generation_is_a_protocol_error(host):
    host.conn.sendall(encode_frame({"version": 1, "session_id": "s-1", "generation": "g-other", "message": {"kind": "shutdown"}}))
    assert host.recv() is None
    assert host.wait() == 2
    assert "ENVELOPE_GENERATION_MISMATCH" in host.stderr()


def test_a_host_only_message_from_the_host_is_a_protocol_error(host):
    host.send({"kind": "completed", "id": "x", "result": {"kind": "failed", "error": "?"}})
    assert host.recv() is None
    assert host.wait() == 2


@pytest.mark.parametrize("setsid", [False, True])
def test_spawned_sleepers_are_gone_after_shutdown(host, setsid):
    prefix = "'setsid', " if setsid else ""
    out = cell_ok(host.execute(
        "import subprocess\n"
        f"direct = subprocess.Popen([{prefix}'sleep', '1000'])\n"
        "orphan = subprocess.run(['sh', '-c', "
        f"'{'setsid ' if setsid else ''}sleep 1000 >/dev/null 2>&1 & echo $!'], capture_output=True, text=True).stdout\n"
        "[direct.pid, int(orphan)]"
    ))
    pids = json.loads(out[0]["text"])
    assert all(alive(pid) for pid in pids)
    host.send({"kind": "shutdown"})
    assert host.wait() == 0
    assert wait_for(lambda: not any(alive(pid) for pid in pids), 5)


def test_sigterm_takes_the_tree_down(host):
    out = cell_ok(host.execute("import subprocess\nsubprocess.Popen(['sleep', '1000']).pid"))
    pid = int(out[0]["text"])
    os.kill(host.proc.pid, signal.SIGTERM)
    assert host.wait() == 143
    assert wait_for(lambda: not alive(pid), 5)


def test_worst_case_escaping_still_fits_one_frame(host):
    result = host.execute("print('\\x01' * 70000)\nraise ValueError('\\x01' * 70000)")
    assert result["status"] == "error"
    assert result["output"] == [{"stream": "stdout", "text": "\x01" * 65536}]
    assert len(result["error"].encode()) == 65536
    error_total = len(format_value_error("\x01" * 70000).encode())
    assert result["truncated_bytes"] == (70001 - 65536) + (error_total - 65536)


def format_value_error(message: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "<cell op-1>", line 2, in <module>\n'
        f"    raise ValueError('\\x01' * 70000)\n"
        f"ValueError: {message}\n"
    )


def test_a_background_task_raising_keyboardinterrupt_does_not_end_the_worker(host):
    cell_ok(host.execute(
        "import asyncio\n"
        "async def rude():\n    raise KeyboardInterrupt\n"
        "async def ruder():\n    raise SystemExit(9)\n"
        "asyncio.create_task(rude()); asyncio.create_task(ruder())\n"
        "await asyncio.sleep(0)"
    ))
    assert cell_ok(host.execute("import asyncio\nawait asyncio.sleep(0.05)\n'still serving'")) == [
        {"stream": "result", "text": "'still serving'"}
    ]
    assert "a background task raised KeyboardInterrupt; ignored" in host.stderr()
    assert "a background task raised SystemExit; ignored" in host.stderr()


def test_eof_during_a_cell_that_swallows_interrupts_still_ends_the_worker(host):
    out = cell_ok(host.execute("import subprocess\nsubprocess.Popen(['sleep', '1000']).pid"))
    pid = int(out[0]["text"])
    host.send({"kind": "execute", "id": "stubborn", "code": (
        "open('stubborn', 'w').close()\n"
        "while True:\n"
        "    try:\n"
        "        while True:\n"
        "            pass\n"
        "    except BaseException:\n"
        "        pass\n"
    )})
    started(host, "stubborn")  # an EOF before the cell ran ends the worker without the watchdog
    host.conn.close()
    host.conn = None
    assert host.wait(15) == 0
    assert "did not stop" in host.stderr()
    assert wait_for(lambda: not alive(pid), 5)


def test_shutdown_is_read_while_a_callback_blocks_the_loop_after_its_cell_ended(host):
    # No cell runs, but the loop is busy (a callback a cell left behind never returns): the reader
    # thread watches the socket whenever the loop is out of its select, so the shutdown is read and
    # the watchdog ends the worker.
    cell_ok(host.execute(
        "import asyncio, time\n"
        "def block():\n"
        "    open('blocking', 'w').close()\n"
        "    while True:\n"
        "        time.sleep(0.01)\n"
        "asyncio.get_running_loop().call_later(0.01, block)\n"
        "None"
    ))
    started(host, "blocking")
    host.send({"kind": "shutdown"})
    assert host.wait(15) == 0
    assert "did not stop" in host.stderr()


def test_missing_token_fails_startup():
    with FakeHost(token=None, accept=False) as fake:
        assert fake.wait() == 1
        assert "WORKER_TOKEN_MISSING" in fake.stderr()


def test_a_cell_cancelling_its_own_task_without_awaiting_completes_interrupted(host):
    # The cancellation cannot reach the cell's code any more; the task still ends cancelled.
    result = host.execute("import asyncio\nasyncio.current_task().cancel()")
    assert result["status"] == "interrupted"
    assert result["output"] == [{"stream": "result", "text": "True"}]
    assert cell_ok(host.execute("1+1")) == [{"stream": "result", "text": "2"}]


def test_a_request_queued_before_the_cell_ends_is_written_before_its_completion(host):
    op_id = host.new_id()
    host.send({
        "kind": "execute", "id": op_id,
        "code": "import asyncio\nt = asyncio.ensure_future(runtime.send('x'))\nawait asyncio.sleep(0)",
    })
    first = host.recv()
    assert first["kind"] == "host_request" and first["execution_id"] == op_id
    second = host.recv()
    assert second["kind"] == "completed" and second["id"] == op_id
    assert second["result"]["status"] == "ok"
    # Its late reply is discarded; the worker keeps serving.
    host.send({"kind": "host_reply", "id": first["id"], "execution_id": op_id, "reply": {"kind": "ok", "value": 1}})
    assert cell_ok(host.execute("t.exception().code")) == [{"stream": "result", "text": "'scope_expired'"}]


def test_lone_expression_cells_and_statement_cells_alternate(host):
    assert cell_ok(host.execute("x = 20")) == []
    assert cell_ok(host.execute("x + 22")) == [{"stream": "result", "text": "42"}]
    assert cell_ok(host.execute("_ * 2")) == [{"stream": "result", "text": "84"}]
    result = host.execute("1 +")
    assert result["status"] == "error" and "SyntaxError" in result["error"]
    result = host.execute("undefined_name")
    assert result["status"] == "error"
    assert 'File "<cell ' in result["error"] and "NameError" in result["error"]


def test_an_interrupt_raises_once_in_a_cell_that_catches_it_and_runs_on(host):
    # The doorbell raises it in the loop; the reader thread reads the same message afterwards and
    # must find the kick landed, not kick a second time into the code after the except.
    code = (
        "import time\n"
        "open('looping', 'w').close()\n"
        "caught = 0\n"
        "try:\n"
        "    while True:\n"
        "        pass\n"
        "except KeyboardInterrupt:\n"
        "    caught += 1\n"
        "until = time.monotonic() + 0.5\n"
        "while time.monotonic() < until:\n"
        "    pass\n"
        "caught"
    )
    host.send({"kind": "execute", "id": "once", "code": code})
    started(host, "looping")
    host.send({"kind": "interrupt", "id": "once"})
    assert cell_ok(host.until_completed("once")) == [{"stream": "result", "text": "1"}]


def test_an_interrupt_waits_for_a_cell_that_blocks_sigint(host):
    # SIGINT blocked: the interrupt lands only once the cell unblocks it, as the kick (a SIGINT)
    # always did; the doorbell must not raise it past the mask. The cell sees the kick pending.
    code = (
        "import signal\n"
        "signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])\n"
        "open('blocked', 'w').close()\n"
        "while signal.SIGINT not in signal.sigpending():\n"
        "    pass\n"
        "open('unblocking', 'w').close()\n"
        "signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])\n"
        "while True:\n"
        "    pass"
    )
    interrupted_once_blocked(host, "masked", code)
    assert os.path.exists(os.path.join(host.dir, "unblocking"))


def test_a_message_for_no_cell_does_not_interrupt_the_cells_blocking_c_call(host):
    # The doorbell's signal comes with every message while a cell runs, not only its interrupt: it
    # must not make a C library's blocking call (which does not retry as Python's own do) fail with
    # EINTR. A read through libc, blocked while the host sends an interrupt for another id, reads.
    code = (
        "import ctypes, os, threading, time\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "r, w = os.pipe()\n"
        "def later():\n"
        "    while not os.path.exists('sent'):\n"
        "        time.sleep(0.005)\n"
        "    time.sleep(0.2)\n"
        "    os.write(w, b'x')\n"
        "threading.Thread(target=later).start()\n"
        "open('reading', 'w').close()\n"
        "buf = ctypes.create_string_buffer(1)\n"
        "n = libc.read(r, buf, 1)\n"
        "(n, ctypes.get_errno() if n < 0 else 0)"
    )
    host.send({"kind": "execute", "id": "reader", "code": code})
    started(host, "reading")
    host.send({"kind": "interrupt", "id": "not-running"})
    open(os.path.join(host.dir, "sent"), "w").close()
    assert cell_ok(host.until_completed("reader")) == [{"stream": "result", "text": "(1, 0)"}]
