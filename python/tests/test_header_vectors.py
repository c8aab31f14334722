"""fixtures/header/*.json through klbr.header: the same cases test/vectors.test.ts runs in TypeScript.

Every file in fixtures/header/ must have a runner below (a new file fails the run until it gets
one), and every case of every file runs by its description. Nothing is skipped: ``NOT_RUN`` is
the explicit list of cases Python deliberately does not run, and it is empty, because
``klbr.header.diff_patches`` ports the TypeScript line diff step by step, so ``revise`` and
``observe`` are compared with the exact TypeScript output. On top of that, every revise vector
that expects a diff is also checked the other way: the TypeScript-produced patches applied by
Python reproduce the target text exactly.
"""

from __future__ import annotations

import pytest

from conftest import FIXTURES, load_vectors, same_value
from klbr.header import (
    HeaderError,
    apply_change,
    fold,
    join_sources,
    observe,
    parse_header_record,
    render_observation,
    resolve,
    revise,
    sha256_hex,
    split_lines,
    verified_change,
)

_NO_BASE = object()


def _apply(i: dict):
    applied = apply_change(i["base"], i["change"], i["target"])
    return {"text": applied["text"], "sources": applied["sources"]}


def _resolve(i: dict):
    resolution = resolve(i["chain"])
    stopped = resolution["stopped"]
    return {**resolution, "stopped": stopped and {"index": stopped["index"], "code": stopped["code"]}}


def _render(i: dict):
    return render_observation(i["revision"], i["base"]) if "base" in i else render_observation(i["revision"])


RUNNERS = {
    "lines.json": lambda i: {"lines": split_lines(i["text"])},
    "revise.json": lambda i: revise(i["base"], i["sources"]),
    "apply.json": _apply,
    "verified.json": lambda i: verified_change(i["base"], i["proposed"], i["sources"]),
    "resolve.json": _resolve,
    "observe.json": lambda i: observe(i["chain"], i["sources"], i["actor"], i["now"]),
    "fold.json": lambda i: fold(i["chain"], i["sources"], i["now"], i["covered"]),
    "render.json": _render,
    "records.json": parse_header_record,
}

# (file, description) -> why Python does not run it. Empty on purpose; see the module docstring.
NOT_RUN: dict[tuple[str, str], str] = {}

FILES = sorted(path.name for path in (FIXTURES / "header").glob("*.json"))
CASES = [(name, case) for name in FILES for case in load_vectors(f"header/{name}")]


def test_every_file_has_a_runner_and_nothing_is_skipped_silently():
    assert FILES == sorted(RUNNERS), "a fixtures/header file without a Python runner (or a runner without a file)"
    assert len(NOT_RUN) == 0
    keys = {(name, case["description"]) for name, case in CASES}
    assert len(keys) == len(CASES), "descriptions must be unique within a file"
    assert set(NOT_RUN) <= keys
    for name, case in CASES:
        assert ("expected" in case) != ("error" in case), (name, case["description"])
    assert len(CASES) >= 100


@pytest.mark.parametrize(("name", "case"), CASES, ids=[f"{name}: {case['description']}" for name, case in CASES])
def test_vector(name, case):
    run = RUNNERS[name]
    if "error" in case:
        with pytest.raises(HeaderError) as caught:
            run(case["input"])
        assert caught.value.code == case["error"]["code"]
    else:
        got = run(case["input"])
        assert same_value(got, case["expected"]), f"{got!r} != {case['expected']!r}"


REVISE_DIFFS = [
    case for case in load_vectors("header/revise.json") if "expected" in case and case["expected"]["form"] == "diff"
]


@pytest.mark.parametrize("case", REVISE_DIFFS, ids=[case["description"] for case in REVISE_DIFFS])
def test_typescript_patches_reproduce_the_target(case):
    """Independent of Python's own diff: the patches TypeScript wrote apply exactly in Python."""
    sources = case["input"]["sources"]
    target_text = join_sources(sources)
    target = {"digest": sha256_hex(target_text), "sources": [{"name": s["name"], "digest": sha256_hex(s["text"])} for s in sources]}
    applied = apply_change(case["input"]["base"], case["expected"], target)
    assert applied["text"] == target_text
    if applied["sources"] is not None:
        assert applied["sources"] == [{"name": s["name"], "text": s["text"]} for s in sources]


def test_the_revise_file_holds_diffs_to_cross_check():
    assert len(REVISE_DIFFS) >= 10
