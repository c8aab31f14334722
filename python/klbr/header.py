"""The instruction header (mirror of @klbr/header): pins, revisions, verified line patches, render.

A transcript pins the instruction text at its head (``header_pin``) and records each change it
observes after that (``header_revision``), carried as line patches that must verify against the
base text's SHA-256 and reproduce the new text's SHA-256, or as the whole text. Records are plain
dicts in the spec's JSON shapes. Every rule here is the TypeScript package's, pinned by the shared
vectors in ``fixtures/header/``; errors raise :class:`HeaderError` with the same ``code`` strings.

``diff_patches`` is a port of the line diff @klbr/header uses (jsdiff 8's Myers search, including
how it breaks ties and its 1,024-edit cap), so ``revise`` and ``observe`` produce the same patches.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from datetime import datetime, timezone
from typing import Any, Iterable, Optional, Sequence

__all__ = [
    "HEADER_ERROR_CODES",
    "JOINED_SOURCE",
    "MAX_EDIT_LENGTH",
    "NO_NEWLINE_MARKER",
    "OBSERVATION_NOTICE",
    "HeaderError",
    "apply_change",
    "apply_patches",
    "check_actor",
    "check_patch",
    "check_sources",
    "check_time",
    "current_text_supported",
    "describe_actor",
    "diff_patches",
    "fold",
    "format_stamp",
    "is_digest",
    "is_well_formed_text",
    "join_lines",
    "join_sources",
    "observe",
    "parse_header_pin",
    "parse_header_record",
    "parse_header_revision",
    "patches_per_source",
    "pin_at_start",
    "record_sources",
    "render_observation",
    "render_patches",
    "resolve",
    "revise",
    "sha256_hex",
    "sources_line_up",
    "split_lines",
    "verified_change",
]

# ---------------------------------------------------------------------------------------------
# Errors

HEADER_ERROR_CODES = (
    "HEADER_INVALID_RECORD",
    "HEADER_INVALID_SOURCES",
    "HEADER_INVALID_ACTOR",
    "HEADER_INVALID_TIME",
    "HEADER_NO_PIN",
    "HEADER_BASE_MISMATCH",
    "HEADER_PATCH_INVALID",
    "HEADER_PATCH_MISMATCH",
    "HEADER_RESULT_MISMATCH",
    "HEADER_SOURCE_MISMATCH",
)


class HeaderError(Exception):
    """A header rule was broken; ``code`` is one of HEADER_ERROR_CODES (the TypeScript strings)."""

    def __init__(self, code: str, message: str) -> None:
        if code not in HEADER_ERROR_CODES:
            raise ValueError(f"unknown header error code {code!r}")
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def _describe(value: Any) -> str:
    """Shorten a value for an error message so a huge text never floods a log."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else f"{text[:77]}..."


# ---------------------------------------------------------------------------------------------
# Digests, numbers, lines and sources

JOINED_SOURCE = "instructions"
"""The source name a change uses when it patches the joined text instead of each source."""

_DIGEST = re.compile(r"[0-9a-f]{64}")
_SURROGATE = re.compile("[\ud800-\udfff]")
_IDENTIFIER = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_MAX_SAFE_INTEGER = 2**53 - 1


def sha256_hex(text: str) -> str:
    """SHA-256 of the UTF-8 bytes of ``text``, as 64 lowercase hex characters."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def is_digest(value: Any) -> bool:
    """True when ``value`` is a digest: 64 lowercase hex characters."""
    return isinstance(value, str) and _DIGEST.fullmatch(value) is not None


def is_well_formed_text(value: Any) -> bool:
    """True when ``value`` is a string without surrogates, so its UTF-8 digest names one text."""
    return isinstance(value, str) and _SURROGATE.search(value) is None


def _safe_integer(value: Any) -> Optional[int]:
    """The integer a JSON number stands for (JavaScript's Number.isSafeInteger), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and abs(value) <= _MAX_SAFE_INTEGER:
        return value
    return None


def split_lines(text: str) -> list[str]:
    """Lines that keep their endings: a line ends after "\\n" ("\\r\\n" stays whole, a lone "\\r"
    is text); a last line without a newline is kept; the empty text has no lines."""
    lines: list[str] = []
    start = 0
    while True:
        end = text.find("\n", start)
        if end == -1:
            break
        lines.append(text[start : end + 1])
        start = end + 1
    if start < len(text):
        lines.append(text[start:])
    return lines


def join_lines(lines: Iterable[str]) -> str:
    """Join lines back into a text: plain concatenation, since every line carries its ending."""
    return "".join(lines)


def check_sources(sources: Any) -> list[dict]:
    """Check a source list and copy it to ``{name, text}`` dicts: names non-empty and distinct,
    texts well-formed strings. Raises HEADER_INVALID_SOURCES."""
    if not isinstance(sources, (list, tuple)):
        raise HeaderError("HEADER_INVALID_SOURCES", f"sources must be an array, got {_describe(sources)}")
    seen: set[str] = set()
    out = []
    for index, source in enumerate(sources):
        if not isinstance(source, dict):
            raise HeaderError("HEADER_INVALID_SOURCES", f"source {index} is not an object: {_describe(source)}")
        name, text = source.get("name"), source.get("text")
        if not is_well_formed_text(name) or name == "":
            raise HeaderError("HEADER_INVALID_SOURCES", f"source {index} has an invalid name {_describe(name)}")
        if name in seen:
            raise HeaderError("HEADER_INVALID_SOURCES", f"source name {_describe(name)} appears twice")
        seen.add(name)
        if not is_well_formed_text(text):
            raise HeaderError("HEADER_INVALID_SOURCES", f"source {_describe(name)} has an invalid text {_describe(text)}")
        out.append({"name": name, "text": text})
    return out


def join_sources(sources: Iterable[dict]) -> str:
    """The instruction text of a source list: the texts concatenated in order, each as-is."""
    return "".join(source["text"] for source in sources)


def record_sources(sources: Any) -> list[dict]:
    """The sources as a revision records them: ``{name, digest, text}``."""
    return [{"name": s["name"], "digest": sha256_hex(s["text"]), "text": s["text"]} for s in check_sources(sources)]


def sources_line_up(a: Sequence[dict], b: Sequence[dict]) -> bool:
    """True when two source lists have the same names in the same order."""
    return len(a) == len(b) and all(x.get("name") == y.get("name") for x, y in zip(a, b))


# ---------------------------------------------------------------------------------------------
# Patches

MAX_EDIT_LENGTH = 1024
"""Beyond this many edited lines a change is carried as the whole text (as in TypeScript)."""


def _is_line(value: Any) -> bool:
    if not isinstance(value, str) or value == "":
        return False
    newline = value.find("\n")
    return newline == -1 or newline == len(value) - 1


def check_patch(patch: Any) -> dict:
    """Check one patch's shape and copy it: a source name, a 1-based ``start_line``, lists of
    single lines, not both empty. Raises HEADER_PATCH_INVALID."""
    if not isinstance(patch, dict):
        raise HeaderError("HEADER_PATCH_INVALID", f"a patch must be an object, got {_describe(patch)}")
    keys = ",".join(sorted(patch))
    if keys != "new_lines,old_lines,source,start_line":
        raise HeaderError(
            "HEADER_PATCH_INVALID", f"a patch has the fields source, start_line, old_lines, new_lines; got {_describe(keys)}"
        )
    source = patch["source"]
    if not isinstance(source, str) or source == "":
        raise HeaderError("HEADER_PATCH_INVALID", f"patch source {_describe(source)} is not a name")
    start_line = _safe_integer(patch["start_line"])
    if start_line is None or start_line < 1:
        raise HeaderError(
            "HEADER_PATCH_INVALID", f"patch start_line {_describe(patch['start_line'])} is not a line number (1-based)"
        )
    for field in ("old_lines", "new_lines"):
        lines = patch[field]
        if not isinstance(lines, list):
            raise HeaderError("HEADER_PATCH_INVALID", f"patch {field} must be an array, got {_describe(lines)}")
        for index, line in enumerate(lines):
            if not _is_line(line):
                raise HeaderError(
                    "HEADER_PATCH_INVALID", f"patch {field}[{index}] is {_describe(line)}, which is not one line"
                )
    if not patch["old_lines"] and not patch["new_lines"]:
        raise HeaderError("HEADER_PATCH_INVALID", f"patch at {source}:{start_line} changes nothing")
    return {"source": source, "start_line": start_line, "old_lines": list(patch["old_lines"]), "new_lines": list(patch["new_lines"])}


def apply_patches(text: str, patches: Sequence[Any]) -> str:
    """Apply patches exactly: old lines must be the text's lines at ``start_line`` (counted in the
    original text), patches ascend and never overlap. No fuzz, no line-ending conversion."""
    lines = split_lines(text)
    out: list[str] = []
    next_line = 0  # 0-based index of the first original line not yet consumed
    for raw in patches:
        patch = check_patch(raw)
        at = patch["start_line"] - 1
        where = f"{patch['source']}:{patch['start_line']}"
        if at < next_line:
            raise HeaderError("HEADER_PATCH_INVALID", f"patch at {where} overlaps or precedes the patch before it")
        if at + len(patch["old_lines"]) > len(lines) or at > len(lines):
            raise HeaderError("HEADER_PATCH_MISMATCH", f"patch at {where} reaches past the {len(lines)} lines of its base")
        for i, old in enumerate(patch["old_lines"]):
            if lines[at + i] != old:
                raise HeaderError(
                    "HEADER_PATCH_MISMATCH",
                    f"patch at {where} expects {_describe(old)} at line {at + i + 1}, base has {_describe(lines[at + i])}",
                )
        out.extend(lines[next_line:at])
        out.extend(patch["new_lines"])
        next_line = at + len(patch["old_lines"])
    out.extend(lines[next_line:])
    return "".join(out)


def _edit_length_lower_bound(a: list[str], b: list[str]) -> int:
    """No alignment keeps more lines than the texts share as multisets."""
    counts: dict[str, int] = {}
    for line in a:
        counts[line] = counts.get(line, 0) + 1
    shared = 0
    for line in b:
        if counts.get(line, 0) > 0:
            shared += 1
            counts[line] -= 1
    return len(a) + len(b) - 2 * shared


def _line_components(old: list[str], new: list[str], max_edit: int) -> Optional[list[tuple[int, bool, bool]]]:
    """jsdiff 8's Myers search (``Diff.diffWithOptionsObj``) over line tokens, ported step by step
    so ties break the same way: ``(count, added, removed)`` runs, or None past ``max_edit`` edits."""
    old_len, new_len = len(old), len(new)
    max_edit = min(max_edit, old_len + new_len)
    # A path is [old_pos, last_component]; a component is (count, added, removed, previous).

    def extract_common(path: list, diagonal: int) -> int:
        old_pos = path[0]
        new_pos = old_pos - diagonal
        common = 0
        while new_pos + 1 < new_len and old_pos + 1 < old_len and old[old_pos + 1] == new[new_pos + 1]:
            new_pos += 1
            old_pos += 1
            common += 1
        if common:
            path[1] = (common, False, False, path[1])
        path[0] = old_pos
        return new_pos

    def add_to_path(path: list, added: bool, removed: bool, increment: int) -> list:
        last = path[1]
        if last is not None and last[1] == added and last[2] == removed:
            return [path[0] + increment, (last[0] + 1, added, removed, last[3])]
        return [path[0] + increment, (1, added, removed, last)]

    def build(last: Any) -> list[tuple[int, bool, bool]]:
        runs = []
        while last is not None:
            runs.append((last[0], last[1], last[2]))
            last = last[3]
        runs.reverse()
        return runs

    best: dict[int, Optional[list]] = {0: [-1, None]}
    new_pos = extract_common(best[0], 0)
    if best[0][0] + 1 >= old_len and new_pos + 1 >= new_len:
        return build(best[0][1])
    min_diagonal: float = float("-inf")
    max_diagonal: float = float("inf")
    edit = 1
    while edit <= max_edit:
        diagonal = int(max(min_diagonal, -edit))
        while diagonal <= min(max_diagonal, edit):
            remove_path = best.get(diagonal - 1)
            add_path = best.get(diagonal + 1)
            if remove_path is not None:
                best[diagonal - 1] = None
            can_add = add_path is not None and 0 <= add_path[0] - diagonal < new_len
            can_remove = remove_path is not None and remove_path[0] + 1 < old_len
            if not can_add and not can_remove:
                best[diagonal] = None
                diagonal += 2
                continue
            if not can_remove or (can_add and remove_path[0] < add_path[0]):  # type: ignore[index]
                path = add_to_path(add_path, True, False, 0)  # type: ignore[arg-type]
            else:
                path = add_to_path(remove_path, False, True, 1)  # type: ignore[arg-type]
            new_pos = extract_common(path, diagonal)
            if path[0] + 1 >= old_len and new_pos + 1 >= new_len:
                return build(path[1])
            best[diagonal] = path
            if path[0] + 1 >= old_len:
                max_diagonal = min(max_diagonal, diagonal - 1)
            if new_pos + 1 >= new_len:
                min_diagonal = max(min_diagonal, diagonal + 1)
            diagonal += 2
        edit += 1
    return None


def diff_patches(old_text: str, new_text: str, source: str) -> Optional[list[dict]]:
    """The line patches that turn ``old_text`` into ``new_text``, labelled ``source``: one patch per
    run of changed lines of a minimal line diff (the same one @klbr/header computes). None when
    the texts differ by more than MAX_EDIT_LENGTH lines."""
    old_lines = split_lines(old_text)
    new_lines = split_lines(new_text)
    if _edit_length_lower_bound(old_lines, new_lines) > MAX_EDIT_LENGTH:
        return None
    runs = _line_components(old_lines, new_lines, MAX_EDIT_LENGTH)
    if runs is None:
        return None
    patches: list[dict] = []
    old_index = new_index = 0
    current: Optional[dict] = None
    for count, added, removed in runs:
        if not added and not removed:
            if current is not None:
                patches.append(current)
            current = None
            old_index += count
            new_index += count
            continue
        if current is None:
            current = {"source": source, "start_line": old_index + 1, "old_lines": [], "new_lines": []}
        if removed:
            current["old_lines"].extend(old_lines[old_index : old_index + count])
            old_index += count
        else:
            current["new_lines"].extend(new_lines[new_index : new_index + count])
            new_index += count
    if current is not None:
        patches.append(current)
    return patches


# ---------------------------------------------------------------------------------------------
# Verified changes

def _base_of(base: Any) -> tuple[str, Optional[list[dict]]]:
    if isinstance(base, str):
        if not is_well_formed_text(base):
            raise HeaderError("HEADER_INVALID_SOURCES", f"base text {_describe(base)} is not well-formed Unicode")
        return base, None
    sources = check_sources(base)
    return join_sources(sources), sources


def patches_per_source(base: Any, target_names: Optional[Sequence[dict]] = None) -> bool:
    """Whether a change patches each source (True) or the joined text as ``instructions``: per
    source exactly when the base has recorded sources and the target's names line up with them."""
    return not isinstance(base, str) and sources_line_up(base, base if target_names is None else target_names)


def _apply_per_source(base: list[dict], patches: Sequence[Any]) -> list[dict]:
    order = {source["name"]: index for index, source in enumerate(base)}
    groups: list[list[Any]] = [[] for _ in base]
    last = 0
    for patch in patches:
        name = patch.get("source") if isinstance(patch, dict) else None
        index = order.get(name) if isinstance(name, str) else None
        if index is None:
            raise HeaderError("HEADER_PATCH_INVALID", f"patch source {_describe(name)} is not one of the base sources")
        if index < last:
            raise HeaderError("HEADER_PATCH_INVALID", f"patch for {_describe(name)} comes after a patch for a later source")
        last = index
        groups[index].append(patch)
    return [{"name": s["name"], "text": apply_patches(s["text"], groups[i])} for i, s in enumerate(base)]


def apply_change(base: Any, change: Any, target: dict) -> dict:
    """Apply ``change`` to ``base`` (a text or a ``[{name, text}]`` list) and verify it against
    ``target`` ``{digest, sources?: [{name, digest?}]}``. Returns ``{text, digest, sources}``
    (``sources`` is None unless patched per source); raises the first HeaderError."""
    base_text, base_sources = _base_of(base)
    if not is_digest(target.get("digest")):
        raise HeaderError(
            "HEADER_INVALID_RECORD", f"target digest {_describe(target.get('digest'))} is not a SHA-256 hex digest"
        )
    if not isinstance(change, dict):
        raise HeaderError("HEADER_INVALID_RECORD", f"change {_describe(change)} is not an object")
    if change.get("form") == "full":
        text = change.get("text")
        if not is_well_formed_text(text):
            raise HeaderError("HEADER_INVALID_RECORD", f"full change text {_describe(text)} is not well-formed Unicode")
        digest = sha256_hex(text)
        if digest != target["digest"]:
            raise HeaderError("HEADER_RESULT_MISMATCH", f"full text has digest {digest}, the revision says {target['digest']}")
        return {"text": text, "digest": digest, "sources": None}
    if change.get("form") != "diff":
        raise HeaderError("HEADER_INVALID_RECORD", f"change form {_describe(change.get('form'))} is neither diff nor full")
    base_digest = sha256_hex(base_text)
    if change.get("base_digest") != base_digest:
        raise HeaderError(
            "HEADER_BASE_MISMATCH", f"change is against {_describe(change.get('base_digest'))}, the base text is {base_digest}"
        )
    patches = change.get("patches")
    if not isinstance(patches, list):
        raise HeaderError("HEADER_PATCH_INVALID", f"change patches {_describe(patches)} is not an array")
    wanted = target.get("sources")
    sources: Optional[list[dict]] = None
    if base_sources is not None and patches_per_source(base_sources, wanted):
        sources = _apply_per_source(base_sources, patches)
        if wanted is not None:
            for index, source in enumerate(sources):
                expected = wanted[index].get("digest") if index < len(wanted) else None
                if expected is not None and sha256_hex(source["text"]) != expected:
                    raise HeaderError(
                        "HEADER_SOURCE_MISMATCH",
                        f"patched source {_describe(source['name'])} does not have its recorded digest {expected}",
                    )
        text = join_sources(sources)
    else:
        for patch in patches:
            name = patch.get("source") if isinstance(patch, dict) else None
            if name != JOINED_SOURCE:
                raise HeaderError(
                    "HEADER_PATCH_INVALID", f"patch source {_describe(name)} where the joined text is patched as {JOINED_SOURCE}"
                )
        text = apply_patches(base_text, patches)
    digest = sha256_hex(text)
    if digest != target["digest"]:
        raise HeaderError("HEADER_RESULT_MISMATCH", f"patched text has digest {digest}, the revision says {target['digest']}")
    return {"text": text, "digest": digest, "sources": sources}


def verified_change(base: Any, proposed: Optional[dict], next_sources: Any) -> dict:
    """Keep ``proposed`` only if it verifiably turns ``base`` into the text of ``next_sources``;
    otherwise (or when nothing is proposed) the change is ``{"form": "full", "text"}``."""
    sources = check_sources(next_sources)
    text = join_sources(sources)
    if proposed is not None:
        target = {"digest": sha256_hex(text), "sources": [{"name": s["name"], "digest": sha256_hex(s["text"])} for s in sources]}
        try:
            apply_change(base, proposed, target)
            return copy.deepcopy(proposed)
        except HeaderError:
            pass
    return {"form": "full", "text": text}


def revise(base: Any, next_sources: Any) -> dict:
    """The change from ``base`` to ``next_sources``: verified line patches (per source when the
    names line up, else over the joined text as ``instructions``), or the whole text."""
    base_text, base_sources = _base_of(base)
    sources = check_sources(next_sources)
    patches: Optional[list[dict]] = []
    if base_sources is not None and sources_line_up(base_sources, sources):
        for old, new in zip(base_sources, sources):
            more = diff_patches(old["text"], new["text"], new["name"])
            if more is None:
                patches = None
                break
            patches.extend(more)  # type: ignore[union-attr]
    else:
        patches = diff_patches(base_text, join_sources(sources), JOINED_SOURCE)
    proposed = None if patches is None else {"form": "diff", "base_digest": sha256_hex(base_text), "patches": patches}
    return verified_change(base, proposed, sources)


# ---------------------------------------------------------------------------------------------
# Records

_PIN_REASONS = ("session_start", "fold", "fold_covered_revision")


def _object(value: Any, what: str, code: str) -> dict:
    if not isinstance(value, dict):
        raise HeaderError(code, f"{what} must be an object, got {_describe(value)}")
    return value


def _fields(value: dict, what: str, code: str, required: Sequence[str], optional: Sequence[str] = ()) -> None:
    for key in value:
        if key not in required and key not in optional:
            raise HeaderError(code, f"{what} has an unknown field {_describe(key)}")
    for key in required:
        if key not in value:
            raise HeaderError(code, f"{what} lacks the field {_describe(key)}")


def _text(value: Any, what: str, code: str = "HEADER_INVALID_RECORD") -> str:
    if not is_well_formed_text(value):
        raise HeaderError(code, f"{what} {_describe(value)} is not a well-formed string")
    return value


def _digest(value: Any, what: str) -> str:
    if not is_digest(value):
        raise HeaderError("HEADER_INVALID_RECORD", f"{what} {_describe(value)} is not 64 lowercase hex characters")
    return value


def check_time(value: Any, what: str = "time") -> int:
    """An instant in milliseconds since the epoch: a non-negative safe integer (HEADER_INVALID_TIME)."""
    number = _safe_integer(value)
    if number is None or number < 0:
        raise HeaderError("HEADER_INVALID_TIME", f"{what} {_describe(value)} is not a non-negative integer of milliseconds")
    return number


def check_actor(value: Any) -> dict:
    """Check an actor strictly and copy it: a session names its execution (an identifier) and step
    (an integer >= 0); a host carries only ``reason`` / ``path``. Raises HEADER_INVALID_ACTOR."""
    actor = _object(value, "actor", "HEADER_INVALID_ACTOR")
    origin = actor.get("origin")
    if origin == "session":
        _fields(actor, "session actor", "HEADER_INVALID_ACTOR", ("origin", "execution_id", "step"), ("path", "reason"))
        execution_id = actor["execution_id"]
        if not isinstance(execution_id, str) or _IDENTIFIER.fullmatch(execution_id) is None:
            raise HeaderError("HEADER_INVALID_ACTOR", f"execution_id {_describe(execution_id)} is not an identifier")
        step = _safe_integer(actor["step"])
        if step is None or step < 0:
            raise HeaderError("HEADER_INVALID_ACTOR", f"step {_describe(actor['step'])} is not a non-negative integer")
        out: dict = {"origin": "session", "execution_id": execution_id, "step": step}
    elif origin == "host":
        _fields(actor, "host actor", "HEADER_INVALID_ACTOR", ("origin",), ("path", "reason"))
        out = {"origin": "host"}
    else:
        raise HeaderError("HEADER_INVALID_ACTOR", f"actor origin {_describe(origin)} is neither session nor host")
    for key in ("path", "reason"):
        if key in actor:
            out[key] = _text(actor[key], f"actor {key}", "HEADER_INVALID_ACTOR")
    return out


def _check_change(value: Any) -> dict:
    change = _object(value, "change", "HEADER_INVALID_RECORD")
    form = change.get("form")
    if form == "full":
        _fields(change, "full change", "HEADER_INVALID_RECORD", ("form", "text"))
        return {"form": "full", "text": _text(change["text"], "change text")}
    if form == "diff":
        _fields(change, "diff change", "HEADER_INVALID_RECORD", ("form", "base_digest", "patches"))
        if not isinstance(change["patches"], list):
            raise HeaderError("HEADER_INVALID_RECORD", f"change patches {_describe(change['patches'])} is not an array")
        return {
            "form": "diff",
            "base_digest": _digest(change["base_digest"], "base_digest"),
            "patches": [check_patch(patch) for patch in change["patches"]],
        }
    raise HeaderError("HEADER_INVALID_RECORD", f"change form {_describe(form)} is neither diff nor full")


def _check_recorded_sources(value: Any) -> list[dict]:
    if not isinstance(value, list):
        raise HeaderError("HEADER_INVALID_RECORD", f"sources {_describe(value)} is not an array")
    names: set[str] = set()
    out = []
    for index, item in enumerate(value):
        source = _object(item, f"source {index}", "HEADER_INVALID_RECORD")
        _fields(source, f"source {index}", "HEADER_INVALID_RECORD", ("name", "digest", "text"))
        name = _text(source["name"], "source name")
        if name == "" or name in names:
            raise HeaderError("HEADER_INVALID_RECORD", f"source name {_describe(name)} is empty or repeated")
        names.add(name)
        out.append({"name": name, "digest": _digest(source["digest"], f"source {_describe(name)} digest"), "text": _text(source["text"], "source text")})
    return out


def parse_header_pin(value: Any) -> dict:
    """Check a ``header_pin`` record's shape strictly (unknown fields fail) and copy it."""
    pin = _object(value, "header_pin", "HEADER_INVALID_RECORD")
    _fields(pin, "header_pin", "HEADER_INVALID_RECORD", ("type", "digest", "text", "reason", "pinned_at_ms"))
    if pin["type"] != "header_pin":
        raise HeaderError("HEADER_INVALID_RECORD", f"record type {_describe(pin['type'])} is not header_pin")
    if not isinstance(pin["reason"], str) or pin["reason"] not in _PIN_REASONS:
        raise HeaderError("HEADER_INVALID_RECORD", f"pin reason {_describe(pin['reason'])} is not one of {', '.join(_PIN_REASONS)}")
    return {
        "type": "header_pin",
        "digest": _digest(pin["digest"], "pin digest"),
        "text": _text(pin["text"], "pin text"),
        "reason": pin["reason"],
        "pinned_at_ms": check_time(pin["pinned_at_ms"], "pinned_at_ms"),
    }


def parse_header_revision(value: Any) -> dict:
    """Check a ``header_revision`` record's shape strictly (unknown fields fail) and copy it."""
    revision = _object(value, "header_revision", "HEADER_INVALID_RECORD")
    _fields(revision, "header_revision", "HEADER_INVALID_RECORD", ("type", "digest", "change", "sources", "actor", "observed_at_ms"))
    if revision["type"] != "header_revision":
        raise HeaderError("HEADER_INVALID_RECORD", f"record type {_describe(revision['type'])} is not header_revision")
    return {
        "type": "header_revision",
        "digest": _digest(revision["digest"], "revision digest"),
        "change": _check_change(revision["change"]),
        "sources": _check_recorded_sources(revision["sources"]),
        "actor": check_actor(revision["actor"]),
        "observed_at_ms": check_time(revision["observed_at_ms"], "observed_at_ms"),
    }


def parse_header_record(value: Any) -> dict:
    """Check any header record (pin or revision) by its ``type``; digests are checked by resolve."""
    kind = value.get("type") if isinstance(value, dict) else None
    if kind == "header_pin":
        return parse_header_pin(value)
    if kind == "header_revision":
        return parse_header_revision(value)
    raise HeaderError("HEADER_INVALID_RECORD", f"record type {_describe(kind)} is neither header_pin nor header_revision")


# ---------------------------------------------------------------------------------------------
# The chain and its three rules


def _step(state: dict, raw: Any) -> dict:
    revision = parse_header_revision(raw)
    for source in revision["sources"]:
        if sha256_hex(source["text"]) != source["digest"]:
            raise HeaderError(
                "HEADER_SOURCE_MISMATCH", f"source {_describe(source['name'])} text does not have its recorded digest {source['digest']}"
            )
    if sha256_hex(join_sources(revision["sources"])) != revision["digest"]:
        raise HeaderError("HEADER_SOURCE_MISMATCH", f"the recorded sources do not join to the revision digest {revision['digest']}")
    base = state["sources"] if state["sources"] is not None else state["text"]
    applied = apply_change(base, revision["change"], {"digest": revision["digest"], "sources": revision["sources"]})
    return {"text": applied["text"], "digest": revision["digest"], "sources": revision["sources"]}


def _stop(index: int, error: HeaderError) -> dict:
    return {"index": index, "code": error.code, "message": error.message}


def resolve(chain: Sequence[Any]) -> dict:
    """The exact current text of a chain: start at the last pin, apply each later revision with
    verification; at a link that does not reconstruct keep the last text that did and resume only
    at a later full revision. Never raises for a bad link (``stopped`` names the first).
    Returns ``{text, digest, sources, head, index, complete, stopped: None or {index, code, message}}``."""
    head = -1
    for i in range(len(chain) - 1, -1, -1):
        link = chain[i]
        if isinstance(link, dict) and link.get("type") == "header_pin":
            head = i
            break
    empty = {"text": None, "digest": None, "sources": None, "head": head, "index": -1}
    if head == -1:
        if not chain:
            return {**empty, "complete": True, "stopped": None}
        error = HeaderError("HEADER_NO_PIN", "the chain has no header_pin to start from")
        return {**empty, "complete": False, "stopped": _stop(0, error)}
    try:
        pin = parse_header_pin(chain[head])
        digest = sha256_hex(pin["text"])
        if digest != pin["digest"]:
            raise HeaderError("HEADER_RESULT_MISMATCH", f"pin text has digest {digest}, the pin says {pin['digest']}")
        state = {"text": pin["text"], "digest": digest, "sources": None}
    except HeaderError as error:
        return {**empty, "complete": False, "stopped": _stop(head, error)}
    index = head
    stopped = None
    for i in range(head + 1, len(chain)):
        # Past a link that did not reconstruct, only a full revision (verified on its own) resumes.
        if index != i - 1 and not _is_full_revision(chain[i]):
            continue
        try:
            state = _step(state, chain[i])
            index = i
        except HeaderError as error:
            if stopped is None:
                stopped = _stop(i, error)
    return {**state, "head": head, "index": index, "complete": stopped is None, "stopped": stopped}


def _is_full_revision(link: Any) -> bool:
    change = link.get("change") if isinstance(link, dict) else None
    return isinstance(change, dict) and change.get("form") == "full"


def _pin(sources: Any, now: Any, reason: str) -> dict:
    pinned_at = check_time(now, "pinned_at_ms")
    text = join_sources(check_sources(sources))
    return {"type": "header_pin", "digest": sha256_hex(text), "text": text, "reason": reason, "pinned_at_ms": pinned_at}


def _head_of(chain: Sequence[Any]) -> dict:
    resolution = resolve(chain)
    if resolution["head"] == -1:
        raise HeaderError("HEADER_NO_PIN", "the chain has no header_pin yet: pin at session start first")
    return resolution


def pin_at_start(sources: Any, now: Any) -> dict:
    """Rule 1: with no pin yet, the transcript pins the current text of ``sources``."""
    return _pin(sources, now, "session_start")


def observe(chain: Sequence[Any], sources: Any, actor: Any, now: Any) -> Optional[dict]:
    """Rule 2: the ``header_revision`` to append when the joined text of ``sources`` differs from
    the newest text the chain reconstructs (a verified change, attributed to ``actor``); None when
    the text is unchanged."""
    current = _head_of(chain)
    observed_at = check_time(now, "observed_at_ms")
    checked_actor = check_actor(actor)
    checked = check_sources(sources)
    text = join_sources(checked)
    digest = sha256_hex(text)
    if digest == current["digest"]:
        return None
    # A chain whose tail does not reconstruct: carry the whole text so it is readable again.
    if current["text"] is None or current["index"] != len(chain) - 1:
        change = {"form": "full", "text": text}
    else:
        change = revise(current["sources"] if current["sources"] is not None else current["text"], checked)
    return {
        "type": "header_revision",
        "digest": digest,
        "change": change,
        "sources": record_sources(checked),
        "actor": checked_actor,
        "observed_at_ms": observed_at,
    }


def current_text_supported(chain: Sequence[Any], covered: Iterable[str]) -> bool:
    """Whether the chain's current text stays readable once the revisions whose digests are in
    ``covered`` can no longer be rendered (the head is readable, an uncovered full revision is,
    an uncovered diff is when a readable link has its base digest)."""
    resolution = resolve(chain)
    if resolution["digest"] is None:
        return False
    gone = set(covered)
    readable: set[str] = set()
    for i in range(resolution["head"], resolution["index"] + 1):
        link = chain[i]
        if link["type"] == "header_pin":
            readable.add(link["digest"])
        elif link["digest"] in gone:
            continue
        elif link["change"]["form"] == "full":
            readable.add(link["digest"])
        elif link["change"].get("base_digest") in readable:
            readable.add(link["digest"])
    return resolution["digest"] in readable


def fold(chain: Sequence[Any], sources: Any, now: Any, covered_revision_digests: Iterable[str]) -> dict:
    """Rule 3: pin the current text of ``sources``; the reason is ``fold_covered_revision`` when the
    text the transcript ran under was readable only through covered revisions, else ``fold``."""
    current = _head_of(chain)
    supported = current["digest"] is None or current_text_supported(chain, covered_revision_digests)
    return _pin(sources, now, "fold" if supported else "fold_covered_revision")


# ---------------------------------------------------------------------------------------------
# What the model reads

_MAX_STAMP_MS = 253_402_300_799_999

OBSERVATION_NOTICE = (
    "the header of this transcript is the revision it started under; the text below is current from here on.\n"
)
"""The second line of every observation."""

NO_NEWLINE_MARKER = "\\ No newline at end of file\n"
"""The marker after a rendered line that has no line ending."""


def format_stamp(ms: Any) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ`` in UTC, seconds rounded down; epoch zero reads ``time unknown``."""
    ms = check_time(ms)
    if ms == 0:
        return "time unknown"
    if ms > _MAX_STAMP_MS:
        raise HeaderError("HEADER_INVALID_TIME", f"time {ms} is past year 9999")
    t = datetime.fromtimestamp(ms // 1000, tz=timezone.utc)
    return f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}Z"


def describe_actor(actor: dict) -> str:
    """Who changed the text, as the observation line says it."""
    if actor["origin"] == "session":
        return f"changed by this session (execution {actor['execution_id']}, step {actor['step']})"
    return "changed outside this transcript"


def _render_lines(prefix: str, lines: Sequence[str]) -> str:
    return "".join(f"{prefix}{line}" if line.endswith("\n") else f"{prefix}{line}\n{NO_NEWLINE_MARKER}" for line in lines)


def render_patches(patches: Sequence[dict]) -> str:
    """Hunks ``@@ <source> -<start>,<old count> +<start in the new text>,<new count> @@`` then
    ``-`` old and ``+`` new lines with their endings (a missing ending is marked)."""
    shift: dict[str, int] = {}
    out = []
    for patch in patches:
        offset = shift.get(patch["source"], 0)
        old, new = patch["old_lines"], patch["new_lines"]
        shift[patch["source"]] = offset + len(new) - len(old)
        start = patch["start_line"]
        out.append(f"@@ {patch['source']} -{start},{len(old)} +{start + offset},{len(new)} @@\n")
        out.append(_render_lines("-", old) + _render_lines("+", new))
    return "".join(out)


def render_observation(revision: Any, base: Any = None) -> str:
    """The observation a revision renders, byte for byte: the stamped line, the notice, then the
    whole text (full form) or the patch (diff form). Given ``base``, a diff that does not verify
    renders the whole current text instead."""
    checked = parse_header_revision(revision)
    line = f"[{format_stamp(checked['observed_at_ms'])} \u00b7 instructions changed for this runtime \u00b7 {describe_actor(checked['actor'])}]\n"
    return line + OBSERVATION_NOTICE + _render_body(checked, base)


def _render_body(revision: dict, base: Any) -> str:
    change = revision["change"]
    if change["form"] == "full":
        return change["text"]
    if base is None:
        return render_patches(change["patches"])
    try:
        apply_change(base, change, {"digest": revision["digest"], "sources": revision["sources"]})
        return render_patches(change["patches"])
    except HeaderError:
        pass
    whole = join_sources(revision["sources"])
    if sha256_hex(whole) != revision["digest"]:
        raise HeaderError(
            "HEADER_SOURCE_MISMATCH", f"revision {revision['digest']} neither patches its base nor joins its sources to its digest"
        )
    return whole
