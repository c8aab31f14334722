"""The worker's side of skills (C4): install a materialized ``skills.json`` as importable modules.

The host indexes and materializes the skill set (``@klbr/skills``); the worker calls
:func:`install_skills` with the ``--skills`` path before it connects. The file is deleted as
soon as it has been read, whatever it holds, so the payload cannot outlive the handshake. Each id
becomes a module ``klbr.skills.<id>`` whose only content is its ``__doc__`` (the body): reading a
skill grants nothing. The returned set revision is what ``hello.skills`` reports.

Verification order (the TypeScript ``parseSkillsFile`` follows the same one, and
``fixtures/skills/skills-file.json`` pins it): strict UTF-8 JSON without duplicate keys, then the
exact shape (``SKILLS_FILE_INVALID``); then each skill in file order: its id
(``SKILL_INVALID_ID``), the form of its digest (``SKILL_INVALID_DIGEST``), uniqueness
(``SKILL_DUPLICATE_ID``), the digest of its body (``SKILL_DIGEST_MISMATCH``); then the set
revision (``SKILL_REVISION_MISMATCH``).
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import re
import struct
import sys
import types
from collections.abc import Iterable

try:
    # CPython's own SHA-256 (3.11; _sha2 from 3.12): hashlib's would load OpenSSL's libcrypto into
    # every worker (~1.5 MiB resident) for a few digests at start-up.
    from _sha256 import sha256 as _sha256
except ImportError:  # pragma: no cover - depends on the interpreter's build
    try:
        from _sha2 import sha256 as _sha256
    except ImportError:
        from hashlib import sha256 as _sha256

__all__ = [
    "SKILL_ERROR_CODES",
    "SKILLS_PACKAGE",
    "SkillError",
    "install_skills",
    "is_skill_id",
    "read_skills_file",
    "skill_set_revision",
]

#: The stable error codes this module raises (the same strings as ``@klbr/skills``).
SKILL_ERROR_CODES = (
    "SKILLS_FILE_INVALID",
    "SKILL_INVALID_ID",
    "SKILL_INVALID_DIGEST",
    "SKILL_DUPLICATE_ID",
    "SKILL_DIGEST_MISMATCH",
    "SKILL_REVISION_MISMATCH",
)

#: The synthetic package the skills are registered under.
SKILLS_PACKAGE = "klbr.skills"

_ID = re.compile(r"[a-z][a-z0-9_]{0,63}")
_DIGEST = re.compile(r"[0-9a-f]{64}")


class SkillError(Exception):
    """A skill set that cannot be installed; ``code`` is stable, the message names the value."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def is_skill_id(value: object) -> bool:
    """True when ``value`` is a str matching ``^[a-z][a-z0-9_]{0,63}$`` (no trailing newline)."""
    # fullmatch, not match with $: "$" would accept a trailing "\n".
    return isinstance(value, str) and _ID.fullmatch(value) is not None


def _is_digest(value: object) -> bool:
    return isinstance(value, str) and _DIGEST.fullmatch(value) is not None


def skill_set_revision(pairs: Iterable[tuple[str, str]]) -> str:
    """SHA-256 over (id, digest) pairs sorted by id: u64BE(id length), id bytes, raw digest (C4)."""
    checked: list[tuple[bytes, bytes]] = []
    seen: set[str] = set()
    for skill_id, digest in pairs:
        if not is_skill_id(skill_id):
            raise SkillError("SKILL_INVALID_ID", f"invalid skill id {skill_id!r}")
        if not _is_digest(digest):
            raise SkillError("SKILL_INVALID_DIGEST", f"skill {skill_id} has an invalid digest {digest!r}")
        if skill_id in seen:
            raise SkillError("SKILL_DUPLICATE_ID", f"skill id {skill_id} appears twice")
        seen.add(skill_id)
        checked.append((skill_id.encode("utf-8"), bytes.fromhex(digest)))
    checked.sort(key=lambda pair: pair[0])
    hasher = _sha256()
    for id_bytes, raw in checked:
        hasher.update(struct.pack(">Q", len(id_bytes)))
        hasher.update(id_bytes)
        hasher.update(raw)
    return hasher.hexdigest()


def _invalid(message: str) -> SkillError:
    return SkillError("SKILLS_FILE_INVALID", f"skills file is invalid: {message}")


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result: dict[str, object] = {}
    for key, value in pairs:
        if key in result:
            raise _invalid(f"duplicate key {key!r}")
        result[key] = value
    return result


def _no_constant(name: str) -> object:
    raise _invalid(f"{name} is not JSON")


def read_skills_file(data: bytes) -> tuple[str, list[tuple[str, str, str]]]:
    """Verify the bytes of a ``skills.json``; return (revision, [(id, digest, body)]) in file order."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _invalid(f"not UTF-8 at byte {error.start}") from None
    try:
        document = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except SkillError:
        raise
    except (ValueError, RecursionError) as error:
        raise _invalid(f"not JSON ({error})") from None
    if not isinstance(document, dict) or set(document) != {"revision", "skills"}:
        raise _invalid('expected an object with exactly "revision" and "skills"')
    revision, items = document["revision"], document["skills"]
    if not isinstance(revision, str):
        raise _invalid('"revision" is not a string')
    if not isinstance(items, list):
        raise _invalid('"skills" is not an array')
    for at, item in enumerate(items):
        if not isinstance(item, dict) or set(item) != {"id", "digest", "body"}:
            raise _invalid(f'skills[{at}] is not an object with exactly "id", "digest" and "body"')
        for key in ("id", "digest", "body"):
            if not isinstance(item[key], str):
                raise _invalid(f"skills[{at}].{key} is not a string")
        try:
            item["body"].encode("utf-8")
        except UnicodeEncodeError:
            raise _invalid(f"skills[{at}].body holds a lone surrogate") from None
    skills: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for item in items:
        skill_id, digest, body = item["id"], item["digest"], item["body"]
        if not is_skill_id(skill_id):
            raise SkillError("SKILL_INVALID_ID", f"invalid skill id {skill_id!r}")
        if not _is_digest(digest):
            raise SkillError("SKILL_INVALID_DIGEST", f"skill {skill_id} has an invalid digest {digest!r}")
        if skill_id in seen:
            raise SkillError("SKILL_DUPLICATE_ID", f"skill id {skill_id} appears twice")
        seen.add(skill_id)
        actual = _sha256(body.encode("utf-8")).hexdigest()
        if actual != digest:
            raise SkillError(
                "SKILL_DIGEST_MISMATCH", f"skill {skill_id} body has digest {actual}, file says {digest}"
            )
        skills.append((skill_id, digest, body))
    actual = skill_set_revision((skill_id, digest) for skill_id, digest, _ in skills)
    if actual != revision:
        raise SkillError("SKILL_REVISION_MISMATCH", f"skill set revision is {actual}, file says {revision!r}")
    return revision, skills


def _read_and_delete(path: str | os.PathLike[str]) -> bytes:
    try:
        try:
            # O_NOFOLLOW: the path is in the host's private directory; a symlink there is not ours.
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as handle:
                return handle.read()
        except OSError as error:
            raise _invalid(f"cannot read {os.fspath(path)!r} ({error.strerror})") from None
    finally:
        # Deleted whatever happens, a refused file included: the payload must not outlive the
        # handshake, so a file that cannot be removed is itself a failure.
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError as error:
            raise _invalid(f"cannot delete {os.fspath(path)!r} ({error.strerror})") from None


def _module_spec(name: str, *, package: bool) -> importlib.machinery.ModuleSpec:
    spec = importlib.machinery.ModuleSpec(name, None, origin="skills.json", is_package=package)
    if package:
        spec.submodule_search_locations = []
    return spec


def _skills_package(ids: list[str], revision: str) -> types.ModuleType:
    package = sys.modules.get(SKILLS_PACKAGE)
    if package is None:
        package = types.ModuleType(SKILLS_PACKAGE)
        package.__spec__ = _module_spec(SKILLS_PACKAGE, package=True)
        package.__path__ = []  # a package with no directory: only registered submodules import
        package.__package__ = SKILLS_PACKAGE
        sys.modules[SKILLS_PACKAGE] = package
        parent = sys.modules.get("klbr")
        if parent is not None:
            setattr(parent, "skills", package)
    listing = "\n".join(f"- klbr.skills.{skill_id}" for skill_id in ids) or "(none)"
    package.__doc__ = f"The skills this worker loaded (revision {revision}).\n\n{listing}\n"
    return package


def install_skills(path: str | os.PathLike[str]) -> str:
    """Read and delete ``skills.json``, verify it, register ``klbr.skills.<id>``; return the revision.

    A second call replaces the previous set: modules of ids no longer present are removed.
    Nothing is registered when verification fails.
    """
    revision, skills = read_skills_file(_read_and_delete(path))
    ids = sorted(skill_id for skill_id, _, _ in skills)
    package = _skills_package(ids, revision)
    prefix = SKILLS_PACKAGE + "."
    for name in [name for name in sys.modules if name.startswith(prefix)]:
        del sys.modules[name]
        package.__dict__.pop(name[len(prefix):], None)
    for skill_id, _, body in skills:
        name = prefix + skill_id
        module = types.ModuleType(name, body)
        module.__spec__ = _module_spec(name, package=False)
        module.__package__ = SKILLS_PACKAGE
        sys.modules[name] = module
        setattr(package, skill_id, module)
    package.__all__ = ids
    return revision
