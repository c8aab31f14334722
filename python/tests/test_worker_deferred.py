"""What a worker loads before its first cell (issue 23: a live workbench's memory).

``ssl`` (OpenSSL) is loaded when a cell first uses it, not with ``asyncio`` (klbr.worker.deferred),
and the skills check does not load OpenSSL's libcrypto through ``hashlib``.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

from klbr.skill_loader import skill_set_revision
from test_worker_support import PYTHON_DIR, FakeHost


def _fresh(code: str) -> str:
    """Run ``code`` in a new interpreter (this one may have loaded ssl already); its stdout."""
    done = subprocess.run(
        [sys.executable, "-B", "-c", code],
        env={"PYTHONPATH": str(PYTHON_DIR), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_ssl_is_loaded_on_first_use_and_then_is_the_whole_module():
    out = _fresh(
        """
import sys, threading
from klbr.worker.deferred import defer_ssl
assert defer_ssl()
import asyncio
print("after asyncio", "_ssl" in sys.modules)
import ssl
print("after import ssl", "_ssl" in sys.modules)
# Eight threads read it first at once: each waits for the one load, none sees half a module.
seen, barrier = [], threading.Barrier(8)
def first_use():
    barrier.wait()
    seen.append(ssl.create_default_context().verify_mode)
threads = [threading.Thread(target=first_use) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print("threads", len(seen), set(seen) == {ssl.CERT_REQUIRED}, type(ssl) is type(sys))
from ssl import SSLContext
import asyncio.sslproto
print("sslproto", asyncio.sslproto is asyncio.base_events.sslproto, asyncio.sslproto.SSLProtocol.__name__)
print("again", defer_ssl())
"""
    )
    assert out.splitlines() == [
        "after asyncio False",
        "after import ssl False",
        "threads 8 True True",
        "sslproto True SSLProtocol",
        "again False",
    ]


def test_dir_of_a_deferred_module_loads_it():
    out = _fresh(
        """
import sys
from klbr.worker.deferred import defer_ssl
defer_ssl()
import asyncio.sslproto
print("SSLProtocol" in dir(asyncio.sslproto), "_ssl" in sys.modules)
"""
    )
    assert out.splitlines() == ["True True"]


def test_a_module_that_fails_to_load_raises_and_is_not_left_in_sys_modules():
    out = _fresh(
        """
import importlib.util, sys, tempfile, os
from klbr.worker.deferred import _defer
d = tempfile.mkdtemp()
with open(os.path.join(d, "broken_mod.py"), "w") as f: f.write("X = 1\\nraise RuntimeError('boom')\\n")
sys.path.insert(0, d)
mod = _defer("broken_mod", importlib.util.find_spec("broken_mod"))
import broken_mod
try:
    broken_mod.X
except RuntimeError as e:
    print("raised", e)
print("in sys.modules", "broken_mod" in sys.modules)
"""
    )
    assert out.splitlines() == ["raised boom", "in sys.modules False"]


def test_a_worker_serves_its_first_cells_without_openssl_and_a_cell_can_use_tls(tmp_path):
    body = "# alpha\n\nA skill.\n"
    skills = [{"id": "alpha", "digest": hashlib.sha256(body.encode()).hexdigest(), "body": body}]
    path = tmp_path / "skills.json"
    revision = skill_set_revision((s["id"], s["digest"]) for s in skills)
    path.write_text(json.dumps({"revision": revision, "skills": skills}), encoding="utf-8")
    with FakeHost(skills=str(path)) as host:
        assert host.hello["skills"] == revision
        out = host.execute("import sys\nsorted(m for m in ('_ssl', '_hashlib') if m in sys.modules)")
        assert out["output"] == [{"stream": "result", "text": "[]"}]
        out = host.execute(
            "import asyncio, ssl\n"
            "async def tls():\n"
            "    try:\n"
            "        await asyncio.open_connection('127.0.0.1', 9, ssl=ssl.create_default_context())\n"
            "    except OSError as e:\n"
            "        return type(e).__name__\n"
            "await tls()"
        )
        assert out["output"] == [{"stream": "result", "text": "'ConnectionRefusedError'"}]
