"""``klbr/remote_install.py`` run as the host runs it: ``python -c <its text> <workdir> <digest>``."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from klbr.remote_install import bundle_digest

SCRIPT = (Path(__file__).resolve().parents[1] / "klbr" / "remote_install.py").read_text(encoding="utf-8")
FILES = {"klbr/__init__.py": b"X = 1\n", "klbr/worker/__main__.py": b"print('w')\n"}


def bundle(files: dict[str, bytes]) -> bytes:
    return json.dumps({"files": [{"path": k, "data": base64.b64encode(v).decode()} for k, v in files.items()]}).encode()


def run(workdir: str, digest: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, workdir, digest], input=stdin, capture_output=True, timeout=60, cwd="/",
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
    )


def test_digest_is_the_source_identity():
    # u64BE(len name) name u64BE(len content) content, names sorted by UTF-8 bytes
    import hashlib

    h = hashlib.sha256()
    for name in sorted(FILES):
        h.update(len(name).to_bytes(8, "big") + name.encode() + len(FILES[name]).to_bytes(8, "big") + FILES[name])
    assert bundle_digest(FILES) == h.hexdigest()


def test_absent_then_installed_then_present(tmp_path):
    digest = bundle_digest(FILES)
    work = str(tmp_path / "w")
    first = run(work, digest, bundle(FILES))
    assert first.returncode == 0, first.stderr
    lines = first.stdout.decode().splitlines()
    assert lines[0].startswith("klbr.install python=3.")
    assert lines[1:] == ["klbr.install absent", "klbr.install installed"]
    target = Path(work) / f"klbr-{digest}"
    assert (target / "klbr" / "worker" / "__main__.py").read_bytes() == FILES["klbr/worker/__main__.py"]
    second = run(work, digest)
    assert second.stdout.decode().splitlines()[1:] == ["klbr.install present"]
    assert [p.name for p in Path(work).iterdir()] == [f"klbr-{digest}"]


def test_a_bundle_that_does_not_match_its_digest_is_refused_and_leaves_nothing(tmp_path):
    digest = bundle_digest(FILES)
    work = tmp_path / "w"
    bad = dict(FILES, **{"klbr/__init__.py": b"X = 2\n"})
    done = run(str(work), digest, bundle(bad))
    assert done.returncode == 2
    assert b"INSTALL_DIGEST_MISMATCH" in done.stderr
    assert list(work.iterdir()) == []


@pytest.mark.parametrize("path", ["../x.py", "/etc/x", "klbr/../../x", "other/x.py", "klbr//x.py"])
def test_paths_outside_the_package_are_refused(tmp_path, path):
    files = {path: b"x"}
    done = run(str(tmp_path / "w"), bundle_digest(files), bundle(files))
    assert done.returncode == 2
    assert b"INSTALL_BAD_PATH" in done.stderr


def test_a_malformed_digest_is_a_usage_error(tmp_path):
    done = run(str(tmp_path / "w"), "abc")
    assert done.returncode == 2 and b"INSTALL_USAGE" in done.stderr
