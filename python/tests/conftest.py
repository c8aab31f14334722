"""Shared test helpers: the language-neutral vectors live in the repository's fixtures/."""

import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def load_vectors(relative: str) -> list[dict]:
    """Load one fixtures file; a file that is missing or malformed fails the run."""
    data = json.loads((FIXTURES / relative).read_text(encoding="utf-8"))
    cases = data["cases"] if isinstance(data, dict) else data
    assert cases, f"{relative} holds no cases"
    return cases


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


def same_value(left, right) -> bool:
    """Equality that also tells 1 from 1.0 and True from 1 (the vectors pin the output types)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(same_value(left[key], right[key]) for key in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(same_value(a, b) for a, b in zip(left, right))
    return left == right
