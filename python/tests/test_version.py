"""The Python package's version is the @klbr/* npm packages' version (one release)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import klbr

REPO = Path(__file__).resolve().parents[2]


def _npm_versions() -> dict[str, str]:
    manifests = sorted(REPO.glob("packages/*/package.json")) + [REPO / "apps/host/package.json"]
    return {json.loads(m.read_text())["name"]: json.loads(m.read_text())["version"] for m in manifests}


def test_pyproject_and_klbr_version_agree():
    pyproject = tomllib.loads((REPO / "python/pyproject.toml").read_text())
    assert pyproject["project"]["version"] == klbr.__version__


def test_python_version_equals_every_npm_package_version():
    versions = _npm_versions()
    assert "@klbr/host" in versions and len(versions) >= 9
    assert {name: klbr.__version__ for name in versions} == versions
