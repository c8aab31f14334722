"""Properties of klbr.header (hypothesis): patches reconstruct exactly, tampering is caught."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from klbr.header import (
    JOINED_SOURCE,
    HeaderError,
    apply_change,
    diff_patches,
    join_lines,
    join_sources,
    observe,
    pin_at_start,
    render_observation,
    resolve,
    revise,
    sha256_hex,
    split_lines,
    verified_change,
)

# Few distinct lines, so repeats and ties are common; endings vary (\n, \r\n, lone \r, none).
LINE = st.sampled_from(["a\n", "b\n", "a\r\n", "\n", "\r\n", "x\ry\n", "\u00e9\n", "\U0001f600\n"])
LAST = st.sampled_from(["", "a", "b\r", "\U0001f600"])
TEXT = st.builds(lambda lines, last: "".join(lines) + last, st.lists(LINE, max_size=12), LAST)
NAMES = st.lists(st.sampled_from(["AGENTS.md", "CLAUDE.md", "extra"]), min_size=1, max_size=3, unique=True)


def _whole_file_patch(base: str, target: str) -> dict:
    """The naive change: one patch replacing every line of the base with every line of the target."""
    old, new = split_lines(base), split_lines(target)
    patches = [] if base == target else [{"source": JOINED_SOURCE, "start_line": 1, "old_lines": old, "new_lines": new}]
    return {"form": "diff", "base_digest": sha256_hex(base), "patches": patches}


def _lcs(a: list[str], b: list[str]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        prev_diag = 0
        for j, y in enumerate(b, 1):
            prev_diag, row[j] = row[j], prev_diag + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


@given(TEXT)
def test_lines_round_trip_and_each_is_one_line(text):
    lines = split_lines(text)
    assert join_lines(lines) == text
    assert all(line and "\n" not in line[:-1] for line in lines)
    assert all(line.endswith("\n") for line in lines[:-1])


@given(TEXT, TEXT)
def test_a_whole_file_patch_reconstructs_the_target(base, target):
    applied = apply_change(base, _whole_file_patch(base, target), {"digest": sha256_hex(target)})
    assert applied["text"] == target
    assert verified_change(base, _whole_file_patch(base, target), [{"name": "s", "text": target}]) == _whole_file_patch(base, target)


@given(TEXT, TEXT)
def test_the_diff_is_minimal_and_reconstructs_the_target(base, target):
    patches = diff_patches(base, target, JOINED_SOURCE)
    assert patches is not None
    edits = sum(len(p["old_lines"]) + len(p["new_lines"]) for p in patches)
    old, new = split_lines(base), split_lines(target)
    assert edits == len(old) + len(new) - 2 * _lcs(old, new)
    change = revise(base, [{"name": "s", "text": target}])
    assert change == {"form": "diff", "base_digest": sha256_hex(base), "patches": patches}
    assert apply_change(base, change, {"digest": sha256_hex(target)})["text"] == target


@given(NAMES, st.data())
def test_per_source_revisions_reconstruct_each_source(names, data):
    base = [{"name": n, "text": data.draw(TEXT)} for n in names]
    new = [{"name": n, "text": data.draw(TEXT)} for n in names]
    change = revise(base, new)
    assert change["form"] == "diff"
    target = {"digest": sha256_hex(join_sources(new)), "sources": [{"name": s["name"], "digest": sha256_hex(s["text"])} for s in new]}
    applied = apply_change(base, change, target)
    assert applied["text"] == join_sources(new)
    assert applied["sources"] == new
    assert all(p["source"] in names for p in change["patches"])


@given(TEXT, TEXT, st.data())
def test_a_tampered_old_line_is_detected(base, target, data):
    change = revise(base, [{"name": "s", "text": target}])
    olds = [(i, j) for i, p in enumerate(change["patches"]) for j in range(len(p["old_lines"]))]
    assume(olds)
    i, j = data.draw(st.sampled_from(olds))
    line = change["patches"][i]["old_lines"][j]
    tampered = data.draw(LINE.filter(lambda other: other != line))
    change["patches"][i]["old_lines"][j] = tampered
    with pytest.raises(HeaderError) as caught:
        apply_change(base, change, {"digest": sha256_hex(target)})
    assert caught.value.code == "HEADER_PATCH_MISMATCH"
    assert verified_change(base, change, [{"name": "s", "text": target}]) == {"form": "full", "text": target}


@given(TEXT, TEXT, st.data())
def test_a_tampered_new_line_is_detected(base, target, data):
    change = revise(base, [{"name": "s", "text": target}])
    news = [(i, j) for i, p in enumerate(change["patches"]) for j in range(len(p["new_lines"]))]
    assume(news)
    i, j = data.draw(st.sampled_from(news))
    line = change["patches"][i]["new_lines"][j]
    change["patches"][i]["new_lines"][j] = data.draw(LINE.filter(lambda other: other != line))
    # Only the text's digest can tell: the old lines still match the base.
    with pytest.raises(HeaderError) as caught:
        apply_change(base, change, {"digest": sha256_hex(target)})
    assert caught.value.code == "HEADER_RESULT_MISMATCH"
    assert verified_change(base, change, [{"name": "s", "text": target}]) == {"form": "full", "text": target}


@given(TEXT, TEXT)
def test_a_diff_against_another_base_is_detected(base, target):
    assume(base != target)
    change = revise(base, [{"name": "s", "text": target}])
    with pytest.raises(HeaderError) as caught:
        apply_change(target, change, {"digest": sha256_hex(target)})
    assert caught.value.code == "HEADER_BASE_MISMATCH"


@settings(max_examples=50)
@given(st.lists(st.lists(st.tuples(st.sampled_from(["A", "B"]), TEXT), min_size=1, max_size=2, unique_by=lambda t: t[0]), min_size=1, max_size=5))
def test_a_chain_of_observations_resolves_to_the_newest_text(versions):
    sources = [[{"name": n, "text": t} for n, t in version] for version in versions]
    chain = [pin_at_start(sources[0], 1_789_329_293_000)]
    for step, version in enumerate(sources[1:], 1):
        revision = observe(chain, version, {"origin": "session", "execution_id": "e1", "step": step}, 1_789_329_293_000 + step)
        if revision is None:
            assert sha256_hex(join_sources(version)) == resolve(chain)["digest"]
            continue
        base = resolve(chain)
        chain.append(revision)
        rendered = render_observation(revision, base["sources"] if base["sources"] is not None else base["text"])
        assert f"(execution e1, step {step})" in rendered
    resolution = resolve(chain)
    assert resolution["complete"] and resolution["stopped"] is None
    assert resolution["text"] == join_sources(sources[-1])
