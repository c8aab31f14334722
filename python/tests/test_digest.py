"""klbr.digest against the shared vectors in fixtures/digest/ (the same cases vitest runs)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.dont_write_bytecode = True  # the default source must never grow a __pycache__

from conftest import FIXTURES, load_vectors  # noqa: E402
from klbr.digest import (  # noqa: E402
    MAX_SOURCE_BYTES,
    ActivationError,
    SourceFile,
    digest_entries,
    scan_source,
    show_name,
    source_digest,
    source_files,
)


def _name(entry: dict) -> bytes:
    return bytes.fromhex(entry["name_hex"]) if "name_hex" in entry else entry["name"].encode("utf-8")


def _content(entry: dict) -> bytes:
    if "text" in entry:
        return entry["text"].encode("utf-8")
    if "hex" in entry:
        return bytes.fromhex(entry["hex"])
    if "fill" in entry:
        return bytes([entry["fill"]["byte"]]) * entry["fill"]["size"]
    raise AssertionError(f"entry has no content: {entry}")


def expand(tree: list[dict]) -> list[dict]:
    """Expand ``repeat`` entries: ``{i}`` becomes the index zero-padded to 4 digits."""
    out = []
    for entry in tree:
        if "repeat" in entry:
            for i in range(entry["repeat"]):
                copy = {k: v for k, v in entry.items() if k != "repeat"}
                copy["name"] = entry["name"].replace("{i}", f"{i:04d}")
                out.append(copy)
        else:
            out.append(entry)
    return out


def build_tree(base: Path, spec: dict) -> str:
    """Create the tree a vector describes under ``base``; return the root to scan."""
    kind = spec.get("root", "directory")
    if kind == "missing":
        return str(base / "missing")
    if kind == "file":
        (base / "file").write_bytes(b"not a directory")
        return str(base / "file")
    real = os.fsencode(base / "real")
    os.mkdir(real)
    for entry in expand(spec.get("tree", [])):
        full = real + b"/" + _name(entry)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        if "symlink" in entry:
            os.symlink(os.fsencode(entry["symlink"]), full)
        elif entry.get("directory"):
            os.makedirs(full)
        elif entry.get("fifo"):
            os.mkfifo(full)
        else:
            with open(full, "wb") as handle:
                handle.write(_content(entry))
    if kind == "symlink":
        os.symlink(real, os.fsencode(base / "root"))
        return str(base / "root")
    return os.fsdecode(real)


@pytest.mark.parametrize("case", load_vectors("digest/entries.json"), ids=lambda c: c["description"])
def test_entries_vectors(case):
    pairs = [(_name(e), _content(e)) for e in case["input"]["entries"]]
    if "error" in case:
        with pytest.raises(ActivationError) as caught:
            digest_entries(pairs)
        assert caught.value.code == case["error"]["code"]
    else:
        assert digest_entries(pairs) == case["expected"]["digest"]


@pytest.mark.parametrize("case", load_vectors("digest/trees.json"), ids=lambda c: c["description"])
def test_admitted_tree_vectors(case, tmp_path):
    root = build_tree(tmp_path, case["input"])
    digest, files = source_files(root)
    assert digest == case["expected"]["digest"]
    assert files == case["expected"]["files"]
    assert source_digest(root) == digest


@pytest.mark.parametrize("case", load_vectors("digest/refusals.json"), ids=lambda c: c["description"])
def test_refused_tree_vectors(case, tmp_path):
    root = build_tree(tmp_path, case["input"])
    with pytest.raises(ActivationError) as caught:
        scan_source(root)
    assert (caught.value.code, caught.value.path) == (case["error"]["code"], case["error"]["path"])
    assert repr(caught.value.path) in str(caught.value) or caught.value.path == "."


def test_the_default_source_matches_behavior_json(fixtures_dir):
    pinned = __import__("json").loads((fixtures_dir / "behavior.json").read_text(encoding="utf-8"))
    root = FIXTURES.parent / pinned["path"]
    assert not (root / "__pycache__").exists(), "python/klbr_hooks/__pycache__ exists: run pytest with python -B and delete it"
    digest, files = source_files(root)
    assert [f["name"] for f in files] == pinned["files"]
    assert digest == pinned["digest"]


def test_cache_refusal_tells_how_to_avoid_it(tmp_path):
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"\0")
    with pytest.raises(ActivationError) as caught:
        scan_source(tmp_path)
    assert caught.value.code == "SOURCE_CACHE"
    assert "-B" in str(caught.value) and "outside the draft" in str(caught.value)


def test_scan_returns_sorted_source_files(tmp_path):
    (tmp_path / "b.py").write_bytes(b"2")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "z.md").write_bytes(b"1")
    files = scan_source(tmp_path)
    assert files == [SourceFile("a/z.md", b"1"), SourceFile("b.py", b"2")]
    assert [f.size for f in files] == [1, 1]


def test_a_file_growing_past_the_limit_is_not_read_whole(tmp_path):
    (tmp_path / "big.md").write_bytes(b"x" * (MAX_SOURCE_BYTES * 4))
    with pytest.raises(ActivationError) as caught:
        scan_source(tmp_path)
    assert caught.value.code == "SOURCE_TOO_LARGE"


def test_digest_entries_accepts_source_files_and_str_names():
    as_files = digest_entries([SourceFile("a.py", b"1"), SourceFile("b.py", b"2")])
    as_pairs = digest_entries([("b.py", b"2"), (b"a.py", b"1")])
    assert as_files == as_pairs


def test_show_name_escapes_only_bytes_outside_utf8():
    assert show_name("caf\u00e9".encode()) == "caf\u00e9"
    assert show_name(b"a\xffb\xe2\x82") == "a\\xffb\\xe2\\x82"
    assert show_name(b"\xe2\xe2\x82\xac") == "\\xe2\u20ac"


def test_main_prints_digest_and_reports_refusals(tmp_path, capsys):
    from klbr.digest import _main

    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "a.py").write_bytes(b"")
    assert _main([str(tmp_path / "ok")]) == 0
    assert capsys.readouterr().out.startswith(source_digest(tmp_path / "ok"))
    assert _main([str(tmp_path / "nope")]) == 1
    assert "SOURCE_NOT_FOUND" in capsys.readouterr().err


def test_a_symlinked_root_is_refused_with_a_trailing_slash(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.py").write_bytes(b"")
    os.symlink(tmp_path / "real", tmp_path / "link")
    with pytest.raises(ActivationError) as caught:
        scan_source(f"{tmp_path / 'link'}/")
    assert (caught.value.code, caught.value.path) == ("SOURCE_SYMLINK", ".")
    assert source_digest(f"{tmp_path / 'real'}/") == source_digest(tmp_path / "real")


def test_python_raises_only_codes_typescript_declares():
    import re

    declared = set(re.findall(r'"((?:SOURCE|MANIFEST|RELEASE|ACTIVATION)_[A-Z_]+)"', (FIXTURES.parent / "packages/activation/src/errors.ts").read_text()))
    python = FIXTURES.parent / "python" / "klbr"
    used = set()
    exported = set()
    for module in ("digest", "manifest"):
        used |= set(re.findall(r'"((?:SOURCE|MANIFEST|RELEASE|ACTIVATION)_[A-Z_]+)"', (python / f"{module}.py").read_text()))
        exported |= set(__import__(f"klbr.{module}", fromlist=["__all__"]).__all__)
    used -= exported  # constant names in __all__, not codes
    assert len(used) >= 15 and used <= declared, used - declared
