"""The hooks worker's invocation queue at its limit: 64 waiting are accepted, the 65th is refused."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from klbr.worker.server import MAX_QUEUED_INVOCATIONS
from test_worker_support import FakeHost, wait_for

MANIFEST = json.dumps(
    {"version": 1, "hooks": {"attention.plan": "gated.handlers:attention", "delivery.review": "gated.handlers:delivery"}}
)

# The first delivery holds the actor (so every later invoke waits in the queue) until the test
# creates the gate file (awaiting, so the worker keeps reading); it says it started by creating `<gate>.started`.
HANDLERS = '''
import asyncio, os
from klbr.sdk import Allow, Hold, Wake

def attention(request, context):
    return Wake(priority=1)

async def delivery(request, context):
    if request.text.startswith("gate:"):
        gate = request.text[5:]
        open(gate + ".started", "w").close()
        while not os.path.exists(gate):
            await asyncio.sleep(0.005)
        return Allow()
    return Hold(request.text)
'''


@pytest.fixture
def source():
    root = Path(tempfile.mkdtemp(dir="/tmp", prefix="kq"))
    tree = root / "draft"
    tree.mkdir()
    (tree / "manifest.json").write_text(MANIFEST, encoding="utf-8")
    (tree / "handlers.py").write_text(HANDLERS, encoding="utf-8")
    (tree / "README.md").write_text("# gated\n", encoding="utf-8")
    yield root, tree
    shutil.rmtree(root, ignore_errors=True)


def test_exactly_64_queued_invocations_are_accepted_and_the_65th_is_refused(source):
    assert MAX_QUEUED_INVOCATIONS == 64
    root, tree = source
    gate = str(root / "gate")
    with FakeHost("hooks", source=str(tree)) as host:
        host.send({"kind": "invoke", "id": "running", "slot": "delivery.review", "input": {"effect_id": "e-0", "destination": "operator", "text": "gate:" + gate}})
        assert wait_for(lambda: os.path.exists(gate + ".started"))
        for n in range(1, 66):
            host.send({"kind": "invoke", "id": f"q{n}", "slot": "delivery.review", "input": {"effect_id": f"e-{n}", "destination": "operator", "text": f"n{n}"}})
        # The refusal comes at once, while the 64 before it still wait behind the running one.
        try:
            refused = host.recv(timeout=10)
        except TimeoutError:
            pytest.fail("no refusal: the 65th queued invocation was accepted (the queue holds more than 64)")
        assert refused["kind"] == "completed" and refused["id"] == "q65"
        assert refused["result"] == {"kind": "failed", "error": "64 invocations are already queued"}
        open(gate, "w").close()
        done = [host.recv() for _ in range(65)]
        assert [m["id"] for m in done] == ["running"] + [f"q{n}" for n in range(1, 65)]
        assert done[0]["result"] == {"kind": "hook", "value": {"action": "allow"}}
        assert all(m["result"] == {"kind": "hook", "value": {"action": "hold", "reason": f"n{n}"}} for n, m in enumerate(done[1:], start=1))
