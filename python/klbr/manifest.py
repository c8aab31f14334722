"""The behaviour source manifest (C5), validated exactly as @klbr/activation does.

``manifest.json`` is ``{"version": 1, "hooks": {"attention.plan": "pkg.mod:attr",
"delivery.review": "pkg.mod:attr"}}``: both slots, no other key anywhere, entrypoints of ASCII
identifiers, both in one top-level package (the name the release root is loaded as). Errors are
``klbr.digest.ActivationError`` with the same codes as TypeScript, naming the field.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from dataclasses import dataclass
from typing import Any, Union

from .digest import ActivationError

__all__ = [
    "ENTRYPOINT_PATTERN",
    "MANIFEST_FILE",
    "MAX_JSON_DEPTH",
    "MANIFEST_SLOTS",
    "Manifest",
    "decode_manifest",
    "parse_manifest",
    "read_manifest",
]

#: The manifest's file name at the root of a source tree.
MANIFEST_FILE = "manifest.json"
#: The two decision slots a manifest must name, in the order they are checked.
MANIFEST_SLOTS = ("attention.plan", "delivery.review")
#: ``module.path:attribute`` of ASCII identifiers (the TypeScript pattern, matched in full).
ENTRYPOINT_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*")

#: Manifests nest no deeper than this many arrays/objects (C1's wire limit), as in TypeScript.
MAX_JSON_DEPTH = 128

_TOP_FIELDS = ("version", "hooks")


def _json_depth(text: str) -> int:
    """The deepest nesting of arrays/objects in ``text``, counted without recursion."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


@dataclass(frozen=True)
class Manifest:
    """A validated manifest: the entrypoint of each slot."""

    hooks: dict[str, str]
    version: int = 1

    @property
    def package(self) -> str:
        """The top-level package both entrypoints live in."""
        return self.hooks["attention.plan"].split(":")[0].split(".")[0]

    def entrypoint(self, slot: str) -> tuple[str, str]:
        """``(module, attribute)`` for ``slot``."""
        module, _, attribute = self.hooks[slot].partition(":")
        return module, attribute


def _fail(code: str, field: str, message: str) -> ActivationError:
    return ActivationError(code, message, path=MANIFEST_FILE, field=field)


def _is_version_one(value: Any) -> bool:
    # JSON 1 and 1.0 are the same number to JavaScript; accept both so the languages agree.
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == 1


def parse_manifest(value: Any) -> Manifest:
    """Validate an already decoded manifest value; errors name the field."""
    if not isinstance(value, dict):
        raise _fail("MANIFEST_NOT_OBJECT", "$", "manifest must be a JSON object")
    unknown = sorted(k for k in value if k not in _TOP_FIELDS)
    if unknown:
        raise _fail("MANIFEST_UNKNOWN_FIELD", unknown[0], f'manifest field {json.dumps(unknown[0])} is not allowed (only "version" and "hooks")')
    if "version" not in value:
        raise _fail("MANIFEST_MISSING_FIELD", "version", 'manifest field "version" is missing')
    if not _is_version_one(value["version"]):
        raise _fail("MANIFEST_BAD_VERSION", "version", f'manifest field "version" must be 1, got {json.dumps(value["version"])}')
    if "hooks" not in value:
        raise _fail("MANIFEST_MISSING_FIELD", "hooks", 'manifest field "hooks" is missing')
    hooks = value["hooks"]
    if not isinstance(hooks, dict):
        raise _fail("MANIFEST_NOT_OBJECT", "hooks", 'manifest field "hooks" must be a JSON object')
    unknown = sorted(k for k in hooks if k not in MANIFEST_SLOTS)
    if unknown:
        field = f"hooks.{unknown[0]}"
        raise _fail("MANIFEST_UNKNOWN_FIELD", field, f"manifest field {json.dumps(field)} is not a decision slot (only {', '.join(MANIFEST_SLOTS)})")
    for slot in MANIFEST_SLOTS:
        if slot not in hooks:
            raise _fail("MANIFEST_MISSING_SLOT", f"hooks.{slot}", f'manifest field "hooks.{slot}" is missing')
    for slot in MANIFEST_SLOTS:
        entry = hooks[slot]
        if not isinstance(entry, str) or ENTRYPOINT_PATTERN.fullmatch(entry) is None:
            raise _fail("MANIFEST_BAD_ENTRYPOINT", f"hooks.{slot}", f'manifest field "hooks.{slot}" must be "module.path:attribute", got {json.dumps(entry)}')
    manifest = Manifest(hooks={slot: hooks[slot] for slot in MANIFEST_SLOTS})
    other = manifest.hooks["delivery.review"].split(":")[0].split(".")[0]
    if other != manifest.package:
        raise _fail("MANIFEST_PACKAGE_MISMATCH", "hooks.delivery.review", f"manifest entrypoints must share one top-level package: {manifest.package!r} and {other!r}")
    return manifest


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in pairs:
        if key in out:
            raise _fail("MANIFEST_INVALID_JSON", "$", f"{MANIFEST_FILE} repeats the key {json.dumps(key)}")
        out[key] = item
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode_manifest(raw: bytes) -> Manifest:
    """Decode and validate manifest.json bytes: strict UTF-8, JSON without duplicate keys."""
    try:
        text = raw.decode("utf-8", "strict")
    except UnicodeDecodeError:
        raise _fail("MANIFEST_INVALID_JSON", "$", f"{MANIFEST_FILE} is not valid UTF-8") from None
    # Checked before decoding: json's recursive decoder would hit the recursion limit first.
    depth = _json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise _fail("MANIFEST_INVALID_JSON", "$", f"{MANIFEST_FILE} nests {depth} levels deep; at most {MAX_JSON_DEPTH}")
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except ActivationError:
        raise
    except ValueError as error:
        raise _fail("MANIFEST_INVALID_JSON", "$", f"{MANIFEST_FILE} is not valid JSON: {error}") from None
    return parse_manifest(value)


def read_manifest(root: Union[str, os.PathLike]) -> Manifest:
    """Read and validate ``<root>/manifest.json`` (not following a symlink)."""
    path = os.path.join(os.fspath(root), MANIFEST_FILE)
    # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it (and a folder)
    # as SOURCE_NOT_REGULAR, like @klbr/activation's readManifest.
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except (FileNotFoundError, NotADirectoryError):
        raise _fail("MANIFEST_MISSING", "$", f"{path!r} does not exist") from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise ActivationError("SOURCE_SYMLINK", f"{path!r} is a symbolic link", path=MANIFEST_FILE) from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ActivationError("SOURCE_NOT_REGULAR", f"{path!r} is not a regular file", path=MANIFEST_FILE)
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return decode_manifest(b"".join(chunks))
