"""The skill id rule and the set revision, against the shared vectors and as properties."""

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import load_vectors
from klbr.skill_loader import SkillError, is_skill_id, skill_set_revision

ID_CASES = load_vectors("skills/ids.json")
REVISION_CASES = load_vectors("skills/revision.json")


@pytest.mark.parametrize("case", ID_CASES, ids=[c["description"] for c in ID_CASES])
def test_id_vector(case):
    assert is_skill_id(case["input"]) is case["expected"]


@pytest.mark.parametrize("case", REVISION_CASES, ids=[c["description"] for c in REVISION_CASES])
def test_revision_vector(case):
    pairs = [(entry["id"], entry["digest"]) for entry in case["input"]]
    if "error" in case:
        with pytest.raises(SkillError) as caught:
            skill_set_revision(pairs)
        assert caught.value.code == case["error"]["code"]
    else:
        assert skill_set_revision(pairs) == case["expected"]


skill_ids = st.from_regex(r"[a-z][a-z0-9_]{0,63}", fullmatch=True)
skill_sets = st.dictionaries(skill_ids, st.binary(max_size=64), max_size=12)


def _pairs(bodies: dict[str, bytes]) -> list[tuple[str, str]]:
    return [(skill_id, hashlib.sha256(body).hexdigest()) for skill_id, body in bodies.items()]


@given(st.text(max_size=70))
def test_id_rule_matches_its_definition(value):
    expected = 1 <= len(value) <= 64 and "a" <= value[0] <= "z" and all(
        c == "_" or "a" <= c <= "z" or "0" <= c <= "9" for c in value
    )
    assert is_skill_id(value) is expected


@given(skill_sets, st.randoms())
def test_revision_does_not_depend_on_order(bodies, rng):
    pairs = _pairs(bodies)
    shuffled = list(pairs)
    rng.shuffle(shuffled)
    assert skill_set_revision(shuffled) == skill_set_revision(pairs)


@given(skill_sets.filter(lambda s: any(s.values())), st.integers(min_value=0), st.integers(min_value=1, max_value=255))
def test_revision_changes_with_any_body_byte(bodies, pick, delta):
    with_bytes = sorted(skill_id for skill_id, body in bodies.items() if body)
    target = with_bytes[pick % len(with_bytes)]
    body = bytearray(bodies[target])
    at = pick % len(body)
    body[at] = (body[at] + delta) % 256
    changed = {**bodies, target: bytes(body)}
    assert skill_set_revision(_pairs(changed)) != skill_set_revision(_pairs(bodies))


@given(skill_sets.filter(bool), skill_ids)
def test_revision_changes_when_the_set_changes(bodies, other):
    base = skill_set_revision(_pairs(bodies))
    first = sorted(bodies)[0]
    assert skill_set_revision(_pairs({k: v for k, v in bodies.items() if k != first})) != base
    if other not in bodies:
        assert skill_set_revision(_pairs({**bodies, other: b""})) != base
        renamed = {other if k == first else k: v for k, v in bodies.items()}
        assert skill_set_revision(_pairs(renamed)) != base
