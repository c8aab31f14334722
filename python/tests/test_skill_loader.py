"""install_skills: the materialized skills.json vectors, deletion, and the synthetic modules."""

import hashlib
import importlib
import json
import os
import pydoc
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import klbr
from conftest import load_vectors
from klbr.skill_loader import (
    SKILL_ERROR_CODES,
    SkillError,
    install_skills,
    read_skills_file,
    skill_set_revision,
)

FILE_CASES = load_vectors("skills/skills-file.json")


def _forget_skills():
    for name in [n for n in sys.modules if n == "klbr.skills" or n.startswith("klbr.skills.")]:
        del sys.modules[name]
    klbr.__dict__.pop("skills", None)


@pytest.fixture(autouse=True)
def clean_modules():
    _forget_skills()
    yield
    _forget_skills()


def _bytes(case) -> bytes:
    data = case["input"]
    return data["text"].encode("utf-8") if "text" in data else bytes.fromhex(data["hex"])


def _skills_file(tmp_path, skills: dict[str, str], revision: str | None = None):
    items = [
        {"id": skill_id, "digest": hashlib.sha256(body.encode()).hexdigest(), "body": body}
        for skill_id, body in skills.items()
    ]
    if revision is None:
        revision = skill_set_revision((item["id"], item["digest"]) for item in items)
    path = tmp_path / "skills.json"
    path.write_text(json.dumps({"revision": revision, "skills": items}), encoding="utf-8")
    return path, revision


@pytest.mark.parametrize("case", FILE_CASES, ids=[c["description"] for c in FILE_CASES])
def test_skills_file_vector(case, tmp_path):
    path = tmp_path / "skills.json"
    path.write_bytes(_bytes(case))
    if "error" in case:
        assert case["error"]["code"] in SKILL_ERROR_CODES
        with pytest.raises(SkillError) as caught:
            install_skills(path)
        assert caught.value.code == case["error"]["code"]
        assert "klbr.skills" not in sys.modules  # nothing registered from a refused file
    else:
        revision = install_skills(path)
        assert revision == case["expected"]["revision"]
        _, skills = read_skills_file(_bytes(case))
        assert [(i, d) for i, d, _ in skills] == [(s["id"], s["digest"]) for s in case["expected"]["skills"]]
        for skill_id, digest, body in skills:
            module = importlib.import_module(f"klbr.skills.{skill_id}")
            assert module.__doc__ == body
            assert hashlib.sha256(module.__doc__.encode()).hexdigest() == digest
    assert not path.exists(), "the file must be deleted whether or not it was valid"


def test_import_statement_and_help(tmp_path):
    body = "# workspace\n\nHow the workspace is laid out.\n"
    path, revision = _skills_file(tmp_path, {"workspace": body, "deploy": "# deploy\nsteps\n"})
    assert install_skills(path) == revision
    import klbr.skills.workspace  # noqa: PLC0415 - the point of the test is the import statement

    assert klbr.skills.workspace.__doc__ == body
    from klbr.skills import deploy  # noqa: PLC0415

    assert deploy.__doc__ == "# deploy\nsteps\n"
    assert klbr.skills.__all__ == ["deploy", "workspace"]
    assert revision in klbr.skills.__doc__
    assert "How the workspace is laid out." in pydoc.render_doc(klbr.skills.workspace, renderer=pydoc.plaintext)
    assert importlib.util.find_spec("klbr.skills.workspace") is not None


def test_a_skill_module_holds_nothing_but_its_doc(tmp_path):
    path, _ = _skills_file(tmp_path, {"workspace": "# workspace\n"})
    install_skills(path)
    module = sys.modules["klbr.skills.workspace"]
    public = {name for name in vars(module) if not name.startswith("__")}
    assert public == set()
    assert set(vars(module)) <= {"__name__", "__doc__", "__package__", "__loader__", "__spec__"}


def test_unknown_skill_does_not_import(tmp_path):
    path, _ = _skills_file(tmp_path, {"workspace": "# workspace\n"})
    install_skills(path)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("klbr.skills.nothing_here")


def test_the_file_is_deleted_before_install_returns(tmp_path):
    path, _ = _skills_file(tmp_path, {"workspace": "# workspace\n"})
    install_skills(path)
    assert os.listdir(tmp_path) == []


def test_a_missing_file_is_skills_file_invalid(tmp_path):
    with pytest.raises(SkillError) as caught:
        install_skills(tmp_path / "nope.json")
    assert caught.value.code == "SKILLS_FILE_INVALID"
    assert "nope.json" in str(caught.value)


def test_a_symlinked_file_is_refused_and_the_link_removed(tmp_path):
    real, _ = _skills_file(tmp_path, {"workspace": "# workspace\n"})
    link = tmp_path / "link.json"
    link.symlink_to(real)
    with pytest.raises(SkillError) as caught:
        install_skills(link)
    assert caught.value.code == "SKILLS_FILE_INVALID"
    assert not link.exists() and not link.is_symlink()
    assert real.exists()


def test_a_second_install_replaces_the_set(tmp_path):
    first, _ = _skills_file(tmp_path, {"old": "# old\n", "kept": "# kept\nv1\n"})
    install_skills(first)
    second, revision = _skills_file(tmp_path, {"kept": "# kept\nv2\n"})
    assert install_skills(second) == revision
    assert "klbr.skills.old" not in sys.modules
    assert not hasattr(klbr.skills, "old")
    assert klbr.skills.kept.__doc__ == "# kept\nv2\n"


def test_an_empty_set_still_registers_the_package(tmp_path):
    path, revision = _skills_file(tmp_path, {})
    assert install_skills(path) == hashlib.sha256(b"").hexdigest() == revision
    assert klbr.skills.__all__ == []


def test_error_messages_name_the_value(tmp_path):
    path, _ = _skills_file(tmp_path, {"workspace": "# workspace\n"}, revision="0" * 64)
    with pytest.raises(SkillError, match="0{64}") as caught:
        install_skills(path)
    assert caught.value.code == "SKILL_REVISION_MISMATCH"


bodies = st.text(st.characters(exclude_categories=["Cs"]), max_size=200)
skill_ids = st.from_regex(r"[a-z][a-z0-9_]{0,63}", fullmatch=True)


@settings(max_examples=50, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(skill_ids, bodies, max_size=6))
def test_any_valid_set_installs_with_its_revision(tmp_path, skills):
    path, revision = _skills_file(tmp_path, skills)
    assert install_skills(path) == revision
    for skill_id, body in skills.items():
        assert sys.modules[f"klbr.skills.{skill_id}"].__doc__ == body
    _forget_skills()


def test_a_directory_is_skills_file_invalid(tmp_path):
    target = tmp_path / "skills.json"
    target.mkdir()
    with pytest.raises(SkillError) as caught:
        install_skills(target)
    assert caught.value.code == "SKILLS_FILE_INVALID"
