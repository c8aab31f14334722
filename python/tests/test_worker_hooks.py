"""``python -m klbr.worker --role hooks`` and ``--skills`` against a fake host, as real processes."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

import klbr
from klbr.skill_loader import skill_set_revision
from test_worker_support import PYTHON_DIR, FakeHost, wait_for

DEFAULT_SOURCE = PYTHON_DIR / "klbr_hooks"


@pytest.fixture
def releases():
    root = tempfile.mkdtemp(dir="/tmp", prefix="kr")
    yield Path(root)
    shutil.rmtree(root, ignore_errors=True)


def release_of(releases: Path, files: dict[str, str], name: str = "draft") -> Path:
    """A source tree at ``releases/<name>`` (the directory name is never the import name)."""
    root = releases / name
    root.mkdir()
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def copy_default(releases: Path, fixtures_dir: Path) -> tuple[Path, str]:
    pinned = json.loads((fixtures_dir / "behavior.json").read_text(encoding="utf-8"))
    root = releases / pinned["digest"]
    root.mkdir()
    for name in pinned["files"]:
        shutil.copyfile(DEFAULT_SOURCE / name, root / name)
    return root, pinned["digest"]


MANIFEST = json.dumps(
    {"version": 1, "hooks": {"attention.plan": "mypolicy.handlers:attention", "delivery.review": "mypolicy.handlers:delivery"}}
)


def invoke(host: FakeHost, slot: str, data: dict, op_id: str | None = None) -> dict:
    op_id = op_id or host.new_id("inv")
    host.send({"kind": "invoke", "id": op_id, "slot": slot, "input": data})
    return host.until_completed(op_id)


ATTENTION = {"event_id": 7, "source": "discord.dm", "received_at_ms": 1000}
DELIVERY = {"effect_id": "e-1", "destination": "operator", "text": "hello"}


def test_the_default_source_from_a_release_directory(releases, fixtures_dir):
    root, digest = copy_default(releases, fixtures_dir)
    with FakeHost("hooks", source=str(root)) as host:
        assert host.hello == {
            "kind": "hello", "token": host.hello["token"], "role": "hooks", "revision": digest,
            "slots": ["attention.plan", "delivery.review"], "skills": None,
            "runtime_version": klbr.__version__,
        }
        assert invoke(host, "attention.plan", ATTENTION) == {"kind": "hook", "value": {"action": "wake", "priority": 60}}
        assert invoke(host, "delivery.review", DELIVERY) == {"kind": "hook", "value": {"action": "allow"}}
        held = invoke(host, "delivery.review", dict(DELIVERY, text="  "))
        assert held == {"kind": "hook", "value": {"action": "hold", "reason": "empty message"}}
        host.send({"kind": "shutdown"})
        assert host.wait() == 0
    assert not any(p.name == "__pycache__" for p in root.rglob("*")), "importing wrote a cache into the release"


HANDLERS = '''
import asyncio
from klbr.sdk import Allow, Hold, Ignore, Wake, Defer

async def attention(request, context):
    await asyncio.sleep(0)
    if request.event_id == 1:
        raise RuntimeError("policy exploded on event 1")
    if request.event_id == 2:
        return "wake please"
    if request.event_id == 3:
        return Wake(priority=101)
    if request.event_id == 4:
        return Ignore(context.operation_id + "@" + context.revision[:8])
    if request.event_id == 5:
        while True:
            pass
    return Defer(seconds=2.5)

def delivery(request, context):
    if request.text == "slow":
        import time
        time.sleep(0.3)
    return Hold(request.text.upper()) if request.text.startswith("!") else Allow()
'''


def custom_source(releases: Path, handlers: str = HANDLERS) -> Path:
    return release_of(releases, {"manifest.json": MANIFEST, "handlers.py": handlers, "README.md": "# policy\n"})


def test_handlers_sync_async_raise_and_bad_returns(releases):
    root = custom_source(releases)
    with FakeHost("hooks", source=str(root)) as host:
        revision = host.hello["revision"]
        assert invoke(host, "attention.plan", dict(ATTENTION, event_id=9)) == {
            "kind": "hook", "value": {"action": "defer", "seconds": 2.5}
        }
        ignored = invoke(host, "attention.plan", dict(ATTENTION, event_id=4), op_id="inv-ctx")
        assert ignored["value"] == {"action": "ignore", "reason": "inv-ctx@" + revision[:8]}
        raised = invoke(host, "attention.plan", dict(ATTENTION, event_id=1))
        assert raised["kind"] == "failed"
        assert "mypolicy.handlers:attention raised RuntimeError: policy exploded on event 1" == raised["error"]
        wrong = invoke(host, "attention.plan", dict(ATTENTION, event_id=2))
        assert wrong["kind"] == "failed" and "must return Wake, Defer or Ignore, got str" in wrong["error"]
        out_of_range = invoke(host, "attention.plan", dict(ATTENTION, event_id=3))
        assert out_of_range["kind"] == "failed" and "priority" in out_of_range["error"]
        assert invoke(host, "delivery.review", dict(DELIVERY, text="!no")) == {
            "kind": "hook", "value": {"action": "hold", "reason": "!NO"}
        }
        assert invoke(host, "delivery.review", DELIVERY)["value"] == {"action": "allow"}


MISBEHAVING = '''
from klbr.sdk import Allow, Wake

class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no str for you")

class Slippery(Wake):
    @property
    def priority(self):
        raise LookupError("no priority")

    @priority.setter
    def priority(self, value):
        pass

def attention(request, context):
    if request.event_id == 1:
        raise Unprintable()
    return Slippery(priority=1)

def delivery(request, context):
    return Allow()
'''


def test_a_handler_whose_exception_or_decision_misbehaves_still_gets_one_failed_completion(releases):
    root = custom_source(releases, MISBEHAVING)
    with FakeHost("hooks", source=str(root)) as host:
        raised = invoke(host, "attention.plan", dict(ATTENTION, event_id=1))
        assert raised == {"kind": "failed", "error": "mypolicy.handlers:attention raised Unprintable: <str() failed>"}
        slippery = invoke(host, "attention.plan", dict(ATTENTION, event_id=2), op_id="inv-slip")
        assert slippery == {"kind": "failed", "error": "attention.plan invocation inv-slip failed: LookupError"}
        assert invoke(host, "delivery.review", DELIVERY) == {"kind": "hook", "value": {"action": "allow"}}


def test_invocations_run_one_at_a_time_in_arrival_order(releases):
    root = custom_source(releases)
    with FakeHost("hooks", source=str(root)) as host:
        host.send({"kind": "invoke", "id": "first", "slot": "delivery.review", "input": dict(DELIVERY, text="slow")})
        host.send({"kind": "invoke", "id": "second", "slot": "delivery.review", "input": dict(DELIVERY, text="!b")})
        first, second = host.recv(), host.recv()
        assert (first["id"], second["id"]) == ("first", "second")
        assert second["result"]["value"] == {"action": "hold", "reason": "!B"}


def test_a_busy_handler_can_be_interrupted_and_the_worker_keeps_serving(releases):
    root = custom_source(releases)
    with FakeHost("hooks", source=str(root)) as host:
        host.send({"kind": "invoke", "id": "spin", "slot": "attention.plan", "input": dict(ATTENTION, event_id=5)})
        time.sleep(0.2)
        host.send({"kind": "interrupt", "id": "spin"})
        result = host.until_completed("spin")
        assert result["kind"] == "failed" and "interrupted" in result["error"]
        assert invoke(host, "delivery.review", DELIVERY)["value"] == {"action": "allow"}


def test_execute_is_refused_by_the_hooks_role(releases):
    root = custom_source(releases)
    with FakeHost("hooks", source=str(root)) as host:
        result = host.execute("1 + 1")
        assert result["kind"] == "failed" and "hooks role" in result["error"]


@pytest.mark.parametrize(
    "handlers, code",
    [
        ("def attention(request):\n    pass\ndef delivery(request, context):\n    pass\n", "WORKER_SOURCE_SIGNATURE"),
        ("attention = 3\ndef delivery(request, context):\n    pass\n", "WORKER_SOURCE_ENTRYPOINT"),
        ("def delivery(request, context):\n    pass\n", "WORKER_SOURCE_ENTRYPOINT"),
        ("raise ImportError('no such thing')\n", "WORKER_SOURCE_IMPORT"),
    ],
)
def test_a_bad_source_fails_startup_with_one_line(releases, handlers, code):
    root = custom_source(releases, handlers)
    with FakeHost("hooks", source=str(root), accept=False) as host:
        assert host.wait() == 1
        lines = host.stderr().strip().splitlines()
        assert len(lines) == 1 and code in lines[0], lines


def test_an_inadmissible_tree_fails_startup(releases):
    root = release_of(releases, {"manifest.json": MANIFEST, "handlers.py": HANDLERS, "data.txt": "x"})
    with FakeHost("hooks", source=str(root), accept=False) as host:
        assert host.wait() == 1
        assert "WORKER_SOURCE_INVALID" in host.stderr() and "SOURCE_EXTENSION" in host.stderr()


def test_skills_are_installed_echoed_and_the_file_deleted(releases):
    bodies = {"alpha": "# alpha\n\nThe first skill.\n", "beta": "# beta\n\nThe second.\n"}
    skills = [
        {"id": i, "digest": hashlib.sha256(body.encode()).hexdigest(), "body": body} for i, body in bodies.items()
    ]
    revision = skill_set_revision((s["id"], s["digest"]) for s in skills)
    path = releases / "skills.json"
    path.write_text(json.dumps({"revision": revision, "skills": skills}), encoding="utf-8")
    with FakeHost(skills=str(path)) as host:
        assert host.hello["skills"] == revision
        assert not path.exists()
        out = host.execute("import klbr.skills.beta as b\nb.__doc__")
        assert out["output"] == [{"stream": "result", "text": repr(bodies["beta"])}]


def test_a_bad_skills_file_fails_startup(releases):
    path = releases / "skills.json"
    path.write_text('{"revision": "nope", "skills": []}', encoding="utf-8")
    with FakeHost(skills=str(path), accept=False) as host:
        assert host.wait() == 1
        assert "WORKER_SKILLS_INVALID" in host.stderr()
    assert wait_for(lambda: not os.path.exists(path), 1)
