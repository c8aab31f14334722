"""``pip install ./python`` (python/README.md) builds in the source tree: the checkout must ignore what it leaves."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

PYTHON_DIR = Path(__file__).resolve().parents[1]

# What setuptools writes beside pyproject.toml when pip builds the wheel in tree.
BUILD_LEFTOVERS = [
    "build/lib/klbr/__init__.py",
    "build/bdist.linux-x86_64/wheel/klbr/__init__.py",
    "klbr.egg-info/PKG-INFO",
    "klbr.egg-info/SOURCES.txt",
]


def test_the_checkout_ignores_what_pip_install_leaves_in_python():
    git = shutil.which("git")
    assert git is not None, "git is needed to read the checkout's ignore rules"
    top = subprocess.run([git, "rev-parse", "--show-toplevel"], cwd=PYTHON_DIR, capture_output=True, text=True)
    assert top.returncode == 0, f"python/ is not in a git checkout: {top.stderr.strip()}"
    paths = [str(PYTHON_DIR / p) for p in BUILD_LEFTOVERS]
    # --no-index: the answer is the ignore rules alone (the paths need not exist, and nothing tracked hides one).
    done = subprocess.run([git, "check-ignore", "--no-index", "--verbose", "--non-matching", *paths], cwd=PYTHON_DIR, capture_output=True, text=True)
    not_ignored = [line.split("\t", 1)[1] for line in done.stdout.splitlines() if line.startswith("::")]
    assert not_ignored == [], f"not ignored: {not_ignored}"
