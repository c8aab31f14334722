"""The worker's serving loop driven in a child process, with a race forced at a chosen point."""

from __future__ import annotations

import asyncio
import contextvars
import json
import subprocess
import sys
import textwrap

from klbr.runtime import ExecutionScope, HostClient, current_scope
from klbr.sdk import Wake
from klbr.worker.capture import CaptureStream
from klbr.worker.cells import CellCompiler, make_namespace, run_compiled
from klbr.worker.hooks_role import HookSource, call_handler
from klbr.worker.server import in_worker_code
from test_worker_support import PYTHON_DIR

# A worker on one end of a socketpair, a host thread on the other; PATCH runs before serving.
_HARNESS = """
import json, os, socket, sys, threading
from klbr.envelope import make_envelope, parse_envelope
from klbr.frame import FrameDecoder, encode_frame
from klbr.worker.connection import Connection
from klbr.worker.server import Worker

a, b = socket.socketpair()
worker = Worker("workbench", Connection(a, "s", "g"))
{patch}
results = []

def host():
    decoder = FrameDecoder()
    b.sendall(encode_frame(make_envelope("s", "g", {{"kind": "execute", "id": "op", "code": {code!r}}})))
    while True:
        data = b.recv(1 << 16)
        if not data:
            return
        for value in decoder.feed(data):
            message = parse_envelope(value, "s", "g")["message"]
            if message["kind"] == "completed":
                results.append(message["result"])
                b.sendall(encode_frame(make_envelope("s", "g", {{"kind": "shutdown"}})))

threading.Thread(target=host, daemon=True).start()
code = worker.run({{"kind": "hello", "token": "t", "role": "workbench", "revision": None, "slots": [], "skills": None}})
print(json.dumps({{"exit": code, "results": results, "finished": worker.namespace.get("finished", False)}}))
sys.stdout.flush()
os._exit(0)
"""


def _serve(code: str, patch: str) -> dict:
    script = _HARNESS.format(patch=textwrap.dedent(patch), code=code)
    done = subprocess.run(
        [sys.executable, "-B", "-c", script], cwd=PYTHON_DIR, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_an_interrupt_read_before_the_cells_first_step_still_breaks_a_blocking_cell():
    # The interrupt arrives after the cell's task was created and before its first step (which
    # runs at once, inside _execute) reached the cell's code: the loop's cancel is queued behind
    # that step, which never yields. The cell must still be broken (by SIGINT) instead of running
    # to its end.
    busy = "import time\nt = time.monotonic()\nwhile time.monotonic() - t < 20:\n    pass\nfinished = True"
    outcome = _serve(busy, """
        original = worker._track
        def racing_track(fg, task):
            original(fg, task)
            message = {"kind": "interrupt", "id": fg.id}
            worker.loop.call_soon(worker._on_message, message)  # behind the running step
            worker._on_arrival(message)                           # the reader thread's part
        worker._track = racing_track
    """)
    assert outcome["exit"] == 0
    assert [r["status"] for r in outcome["results"]] == ["interrupted"]
    assert outcome["finished"] is False


# -- where SIGINT may raise: in_worker_code ------------------------------------------------------


def test_code_the_worker_called_is_worker_code_though_the_innermost_frame_is_not():
    seen = []
    # Stands for stdlib code (asyncio's call_soon) that the runtime's bookkeeping calls.
    client = HostClient(lambda message: b"frame", lambda frame: seen.append(in_worker_code(sys._getframe())))

    async def cell():
        return await client.call("runtime.inspect", {})

    async def main():
        context = contextvars.copy_context()
        context.run(current_scope.set, ExecutionScope("e"))
        task = asyncio.get_running_loop().create_task(cell(), context=context)
        await asyncio.sleep(0)
        task.cancel()

    asyncio.run(main())
    # The same for a callback inside CaptureStream.write.
    CaptureStream("stdout", lambda: seen.append(in_worker_code(sys._getframe())), None).write("x")
    assert seen == [True, True]


def test_a_cells_own_code_and_what_it_calls_are_not_worker_code():
    saved = sys.modules["__main__"]
    try:
        namespace = make_namespace(probe=lambda: in_worker_code(sys._getframe()), in_worker_code=in_worker_code)
        compiled = CellCompiler().compile(
            "import sys\nown = in_worker_code(sys._getframe())\ncalled = probe()\nasync def f():\n"
            "    return probe()\nawaited = await f()",
            "c1",
        )
        asyncio.run(run_compiled(compiled, namespace))
    finally:
        sys.modules["__main__"] = saved
    assert (namespace["own"], namespace["called"], namespace["awaited"]) == (False, False, False)


def test_a_hook_handler_is_not_worker_code():
    seen = []

    def handler(request, context):
        seen.append(in_worker_code(sys._getframe()))
        return Wake(priority=1)

    source = HookSource("/nonexistent", "0" * 64, {"attention.plan": handler}, {"attention.plan": "m:handler"})
    data = {"event_id": 1, "source": "operator", "received_at_ms": 0}
    asyncio.run(call_handler(source, "attention.plan", data, "op"))
    assert seen == [False]
