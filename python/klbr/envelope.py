"""Envelope and message validation (stdlib only), the Python twin of ``@klbr/envelope``.

Validators take a decoded frame value (plain dicts, lists, str, int, float, bool, None) and
return a fresh validated value, or raise :class:`EnvelopeError` with the same ``code`` and
``path`` the TypeScript package gives for the same input (``fixtures/envelopes.json`` pins it).

Check order, the same in both languages (the first fault found is the one reported):

1. A value that must be an object and is not one: ``ENVELOPE_NOT_OBJECT``.
2. A variant's discriminator (``kind``; then ``slot`` for ``invoke``; ``method``; ``action``):
   missing is ``ENVELOPE_MISSING_FIELD``, unknown is ``ENVELOPE_UNKNOWN_KIND`` /
   ``ENVELOPE_UNKNOWN_METHOD`` (``ENVELOPE_INVALID_FIELD`` for ``slot``).
3. The fields in schema order, each checked completely (depth first) before the next.
   Within a field: its type, then its grammar/range, then its size limit, then an identity
   expectation.
4. Unknown fields: ``ENVELOPE_UNKNOWN_FIELD`` (the first in JavaScript property order).
5. Rules across fields (``hello`` role rules): ``ENVELOPE_ROLE_MISMATCH``.

Integers are JSON numbers with an integral value within +-(2**53 - 1): ``3`` and ``3.0`` are
the same number (JavaScript cannot tell them apart), and the validated value is an ``int``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Callable, Iterable

__all__ = [
    "ATTENTION_SOURCES",
    "CELL_STATUSES",
    "ENVELOPE_ERROR_CODES",
    "HOOK_SLOTS",
    "HOST_REQUEST_METHODS",
    "MAX_CELL_SOURCE_BYTES",
    "MAX_ERROR_BYTES",
    "MAX_EVIDENCE_REFS",
    "MAX_IDENTIFIER_LENGTH",
    "MAX_OUTPUT_RECORDS",
    "MAX_OUTPUT_TEXT_BYTES",
    "MAX_PRIORITY",
    "MAX_REQUESTS_PER_CELL",
    "MAX_RUN_OUTPUT_BYTES",
    "MAX_RUN_TIMEOUT_MS",
    "MAX_SEND_TEXT_BYTES",
    "MAX_TOKEN_BYTES",
    "MAX_RUNTIME_VERSION_BYTES",
    "MAX_WAIT_SECONDS",
    "MAX_WORK_ITEM_TEXT_BYTES",
    "MAX_CANDIDATE_TEXT_BYTES",
    "MAX_PEER_CONTENT_BYTES",
    "MAX_PEER_WAIT_MS",
    "WORK_ITEM_OUTCOMES",
    "METHOD_ALIASES",
    "OUTPUT_STREAMS",
    "PROTOCOL_VERSION",
    "WORKER_ROLES",
    "LIVE_OUTPUT_STREAMS",
    "MAX_LIVE_OUTPUT_TEXT_BYTES",
    "OUTPUT_SEQUENCE_MEMORY",
    "MAX_DISPLAYS_PER_CELL",
    "MAX_MIME_TYPE_LENGTH",
    "BINARY_DISPLAY_MIMES",
    "DISPLAY_OMITTED_KEY",
    "DisplaySequence",
    "EnvelopeError",
    "OutputSequence",
    "is_encoded_image",
    "is_mime_type",
    "canonical_method",
    "is_digest",
    "is_error_code",
    "is_identifier",
    "make_envelope",
    "parse_envelope",
    "parse_hello",
    "parse_hook_input",
    "parse_hook_result",
    "parse_host_request",
    "parse_reply_value",
    "utf8_length",
]

#: The envelope ``version`` every v1 frame carries.
PROTOCOL_VERSION = 1
#: Longest identifier (C2), in ASCII characters.
MAX_IDENTIFIER_LENGTH = 128
#: Longest ``hello.runtime_version``, in UTF-8 bytes.
MAX_RUNTIME_VERSION_BYTES = 64
#: Longest ``hello.token``, in UTF-8 bytes.
MAX_TOKEN_BYTES = 256
#: Longest ``execute.code``, in UTF-8 bytes.
MAX_CELL_SOURCE_BYTES = 262_144
#: Most output records one completed cell may carry.
MAX_OUTPUT_RECORDS = 256
#: Most output text one completed cell may carry, in UTF-8 bytes over all records.
MAX_OUTPUT_TEXT_BYTES = 65_536
#: ``output`` (C16) ``text`` is 1..this many UTF-8 bytes.
MAX_LIVE_OUTPUT_TEXT_BYTES = 16_384
#: Most ``display`` messages (C20) one cell may send; more are counted in its ``displays_dropped``.
MAX_DISPLAYS_PER_CELL = 32
#: Longest MIME type a display bundle may use as a key (RFC 6838: 127 + "/" + 127).
MAX_MIME_TYPE_LENGTH = 255
#: The display bundle types that are bytes, sent as canonical base64 (C20).
BINARY_DISPLAY_MIMES = ("image/jpeg", "image/png")
#: The metadata key naming what a display left out to fit one frame: ``{mime: bytes}`` (C20).
DISPLAY_OMITTED_KEY = "klbr/omitted"
#: Completed operation ids an :class:`OutputSequence` remembers to name an ``output`` after ``completed``.
OUTPUT_SEQUENCE_MEMORY = 256
#: Longest cell traceback or worker failure text, in UTF-8 bytes.
MAX_ERROR_BYTES = 65_536
#: Longest ``local.send`` / ``delivery.review`` text, in UTF-8 bytes.
MAX_SEND_TEXT_BYTES = 65_536
#: ``maintenance.originate`` ``purpose`` and ``reason`` are 1..this many UTF-8 bytes (C11).
MAX_WORK_ITEM_TEXT_BYTES = 4096
#: ``orientation.stage`` ``text`` is 1..this many UTF-8 bytes (C11).
MAX_CANDIDATE_TEXT_BYTES = 65_536
#: ``peer.send`` ``content`` is 1..this many UTF-8 bytes (C13).
MAX_PEER_CONTENT_BYTES = 65_536
#: Largest ``peer.result`` ``wait_ms`` (C13); the smallest is 0.
MAX_PEER_WAIT_MS = 600_000
#: ``maintenance.assess`` outcomes (C11): ``deferred`` keeps the item open, the others close it.
WORK_ITEM_OUTCOMES = ("no-change", "changed", "abandoned", "deferred")
#: Upper bound of ``runtime.wait`` and hook ``defer`` seconds; the lower bound 0 is exclusive.
MAX_WAIT_SECONDS = 600
#: Most host requests one foreground cell may make (enforced by the host, not here).
MAX_REQUESTS_PER_CELL = 128
#: Most refs one ``evidence.resolve`` may name.
MAX_EVIDENCE_REFS = 64
#: Largest ``workspace.run`` ``timeout_ms``.
MAX_RUN_TIMEOUT_MS = 3_600_000
#: Largest ``workspace.run`` ``max_output_bytes``.
MAX_RUN_OUTPUT_BYTES = 750_000
#: Largest hook ``wake`` priority (the smallest is 0).
MAX_PRIORITY = 100
#: The decision slots a hooks worker serves, in spec order.
HOOK_SLOTS = ("attention.plan", "delivery.review")
#: Where an attention event came from, as the host classified it (C6).
ATTENTION_SOURCES = ("operator", "discord.dm", "discord.mention", "discord.ambient")
#: The two worker roles.
WORKER_ROLES = ("workbench", "hooks")
#: Cell completion statuses.
CELL_STATUSES = ("ok", "error", "yielded", "interrupted")
#: Output streams of a cell.
OUTPUT_STREAMS = ("stdout", "stderr", "result")
#: Streams of a live ``output`` message (C16): a ``result`` is only ever in the completion.
LIVE_OUTPUT_STREAMS = ("stdout", "stderr")
#: Aliases the spec accepts, mapped to the method they stand for.
METHOD_ALIASES = {"agents.open": "peer.open", "peer.message": "peer.send"}
#: Every code an EnvelopeError may carry (the TypeScript package uses the same strings).
ENVELOPE_ERROR_CODES = (
    "ENVELOPE_NOT_OBJECT",
    "ENVELOPE_MISSING_FIELD",
    "ENVELOPE_UNKNOWN_FIELD",
    "ENVELOPE_INVALID_FIELD",
    "ENVELOPE_BAD_VERSION",
    "ENVELOPE_BAD_IDENTIFIER",
    "ENVELOPE_SESSION_MISMATCH",
    "ENVELOPE_GENERATION_MISMATCH",
    "ENVELOPE_UNKNOWN_KIND",
    "ENVELOPE_UNKNOWN_METHOD",
    "ENVELOPE_LIMIT_EXCEEDED",
    "ENVELOPE_ROLE_MISMATCH",
    # Connection state (C16 live output), raised by OutputSequence, never by a parse of one envelope.
    "ENVELOPE_OUTPUT_NOT_NEGOTIATED",
    "ENVELOPE_OUTPUT_UNKNOWN_OPERATION",
    "ENVELOPE_OUTPUT_AFTER_COMPLETED",
    "ENVELOPE_OUTPUT_SEQUENCE",
    # C20 rich display: a bundle's keys and bytes (one message), then the connection state (DisplaySequence).
    "ENVELOPE_DISPLAY_MIME",
    "ENVELOPE_DISPLAY_ENCODING",
    "ENVELOPE_DISPLAY_NOT_NEGOTIATED",
    "ENVELOPE_DISPLAY_UNKNOWN_OPERATION",
    "ENVELOPE_DISPLAY_AFTER_COMPLETED",
    "ENVELOPE_DISPLAY_SEQUENCE",
    "ENVELOPE_DISPLAY_DROPPED",
)

_MAX_SAFE_INTEGER = 2**53 - 1
_IDENTIFIER = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
_DIGEST = re.compile(r"[0-9a-f]{64}")
_ERROR_CODE = re.compile(r"[a-z][a-z0-9_]*")
_PREVIEW_CHARS = 80
_MISSING = object()

Path = tuple
Validator = Callable[[Any, Path], Any]


class EnvelopeError(Exception):
    """A decoded value that is not a valid envelope (or message part); ``path`` names the field."""

    def __init__(self, code: str, path: str, value: Any, expected: str) -> None:
        shown = "nothing" if value is _MISSING else _preview(value)
        super().__init__(f"{code} at {path or '<root>'}: expected {expected}, got {shown}")
        self.code = code
        self.path = path
        self.value = None if value is _MISSING else value


def _preview(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > _PREVIEW_CHARS:
        return f"{text[:_PREVIEW_CHARS]}... ({len(text)} chars)"
    return text


def _fail(code: str, path: Path, value: Any, expected: str) -> None:
    raise EnvelopeError(code, ".".join(str(key) for key in path), value, expected)


# -- predicates -------------------------------------------------------------------------------


def is_identifier(value: Any) -> bool:
    """True for a C2 identifier: 1..128 of ``A-Z a-z 0-9 _ . -``."""
    return isinstance(value, str) and _IDENTIFIER.fullmatch(value) is not None


def is_digest(value: Any) -> bool:
    """True for a C2 digest: 64 lowercase hex characters."""
    return isinstance(value, str) and _DIGEST.fullmatch(value) is not None


def is_error_code(value: Any) -> bool:
    """True for a host reply error code (C8): ``^[a-z][a-z0-9_]*$``."""
    return isinstance(value, str) and _ERROR_CODE.fullmatch(value) is not None


def utf8_length(text: str) -> int:
    """UTF-8 byte length of ``text``; a lone surrogate counts 3 bytes, as in TypeScript."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def _fits(text: str, limit: int) -> bool:
    if len(text) > limit:
        return False
    return len(text) * 4 <= limit or utf8_length(text) <= limit


def _is_number(value: Any) -> bool:
    # JSON numbers: int or float, never bool; NaN is not a number on the wire (valibot agrees).
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


# -- validator building blocks ----------------------------------------------------------------


def _unknown(value: Any, path: Path) -> Any:
    return value


def _string(value: Any, path: Path) -> str:
    if not isinstance(value, str):
        _fail("ENVELOPE_INVALID_FIELD", path, value, "string")
    return value


def _boolean(value: Any, path: Path) -> bool:
    if not isinstance(value, bool):
        _fail("ENVELOPE_INVALID_FIELD", path, value, "boolean")
    return value


def _picklist(*options: str) -> Validator:
    expected = " | ".join(f'"{option}"' for option in options)

    def validate(value: Any, path: Path) -> str:
        if not isinstance(value, str) or value not in options:
            _fail("ENVELOPE_INVALID_FIELD", path, value, expected)
        return value

    return validate


def _identifier(value: Any, path: Path) -> str:
    _string(value, path)
    if not is_identifier(value):
        _fail("ENVELOPE_BAD_IDENTIFIER", path, value, "an identifier (1..128 of A-Z a-z 0-9 _ . -)")
    return value


def _digest(value: Any, path: Path) -> str:
    _string(value, path)
    if not is_digest(value):
        _fail("ENVELOPE_INVALID_FIELD", path, value, "a digest (64 lowercase hex)")
    return value


def _error_code(value: Any, path: Path) -> str:
    _string(value, path)
    if not is_error_code(value):
        _fail("ENVELOPE_INVALID_FIELD", path, value, "a snake_case code ^[a-z][a-z0-9_]*$")
    return value


def _bounded_text(limit: int) -> Validator:
    def validate(value: Any, path: Path) -> str:
        _string(value, path)
        if not _fits(value, limit):
            _fail("ENVELOPE_LIMIT_EXCEEDED", path, value, f"at most {limit} UTF-8 bytes")
        return value

    return validate


def _integer(low: int, high: int = _MAX_SAFE_INTEGER) -> Validator:
    label = f"an integer >= {low}" if high == _MAX_SAFE_INTEGER else f"an integer in {low}..{high}"

    def validate(value: Any, path: Path) -> int:
        if not _is_number(value):
            _fail("ENVELOPE_INVALID_FIELD", path, value, "number")
        integral = isinstance(value, int) or (math.isfinite(value) and value.is_integer())
        if not integral or abs(value) > _MAX_SAFE_INTEGER or not low <= value <= high:
            _fail("ENVELOPE_INVALID_FIELD", path, value, label)
        return int(value)

    return validate


def _positive_up_to(high: float) -> Validator:
    def validate(value: Any, path: Path) -> int | float:
        if not _is_number(value):
            _fail("ENVELOPE_INVALID_FIELD", path, value, "number")
        if not (math.isfinite(value) and 0 < value <= high):
            _fail("ENVELOPE_INVALID_FIELD", path, value, f"a finite number in (0, {high}]")
        return value

    return validate


def _nullable(inner: Validator) -> Validator:
    def validate(value: Any, path: Path) -> Any:
        return None if value is None else inner(value, path)

    return validate


def _array(item: Validator) -> Validator:
    def validate(value: Any, path: Path) -> list:
        if not isinstance(value, list):
            _fail("ENVELOPE_INVALID_FIELD", path, value, "Array")
        return [item(element, (*path, index)) for index, element in enumerate(value)]

    return validate


def _check(inner: Validator, ok: Callable[[Any], bool], code: str, expected: str) -> Validator:
    def validate(value: Any, path: Path) -> Any:
        result = inner(value, path)
        if not ok(result):
            _fail(code, path, result, expected)
        return result

    return validate


def _object_value(value: Any, path: Path) -> dict:
    if not isinstance(value, dict):
        _fail("ENVELOPE_NOT_OBJECT", path, value, "an object")
    return value


def _string_map(value: Any, path: Path) -> dict:
    _object_value(value, path)
    if not all(isinstance(item, str) for item in value.values()):
        _fail("ENVELOPE_INVALID_FIELD", path, value, "an object of string values")
    return value


def _js_key_order(keys: Iterable[str]) -> list[str]:
    """Keys in JavaScript property order: array indices ascending first, then insertion order."""
    keys = list(keys)
    indices = [key for key in keys if _is_array_index(key)]
    if not indices:
        return keys
    return sorted(indices, key=int) + [key for key in keys if not _is_array_index(key)]


def _is_array_index(key: Any) -> bool:
    return (
        isinstance(key, str)
        and key.isascii()
        and key.isdigit()
        and (key == "0" or not key.startswith("0"))
        and int(key) < 2**32 - 1
    )


class _Field:
    __slots__ = ("name", "validate", "optional")

    def __init__(self, name: str, validate: Validator, optional: bool = False) -> None:
        self.name = name
        self.validate = validate
        self.optional = optional


def _opt(name: str, validate: Validator) -> _Field:
    return _Field(name, validate, optional=True)


def _strict(*fields: _Field | tuple[str, Validator]) -> Validator:
    """A strict object: fields in order, then unknown keys."""
    spec = [field if isinstance(field, _Field) else _Field(*field) for field in fields]
    known = frozenset(field.name for field in spec)

    def validate(value: Any, path: Path) -> dict:
        _object_value(value, path)
        out: dict[str, Any] = {}
        for field in spec:
            if field.name in value:
                out[field.name] = field.validate(value[field.name], (*path, field.name))
            elif not field.optional:
                _fail("ENVELOPE_MISSING_FIELD", (*path, field.name), _MISSING, "a value")
        if len(value) > len(out):
            for key in _js_key_order(value):
                if key not in known:
                    _fail("ENVELOPE_UNKNOWN_FIELD", (*path, key), value[key], "no such field")
        return out

    return validate


def _variant(key: str, options: dict[str, Validator], unknown_code: str) -> Validator:
    expected = " | ".join(f'"{option}"' for option in options)
    if unknown_code == "ENVELOPE_UNKNOWN_METHOD":
        expected = "a host request method"
    else:
        expected = f"one of ({expected})"

    def validate(value: Any, path: Path) -> dict:
        _object_value(value, path)
        if key not in value:
            _fail("ENVELOPE_MISSING_FIELD", (*path, key), _MISSING, "a value")
        tag = value[key]
        if not isinstance(tag, str) or tag not in options:
            _fail(unknown_code, (*path, key), tag, expected)
        return options[tag](value, path)

    return validate


# -- hook I/O (C6) ----------------------------------------------------------------------------

_kind = _picklist

_attention_input = _strict(
    ("event_id", _integer(1)),
    ("source", _picklist(*ATTENTION_SOURCES)),
    ("received_at_ms", _integer(0)),
)
_delivery_input = _strict(
    ("effect_id", _identifier),
    ("destination", _picklist("operator")),
    ("text", _bounded_text(MAX_SEND_TEXT_BYTES)),
)
_wake = _strict(("action", _kind("wake")), ("priority", _integer(0, MAX_PRIORITY)))
_defer = _strict(("action", _kind("defer")), ("seconds", _positive_up_to(MAX_WAIT_SECONDS)))
_ignore = _strict(("action", _kind("ignore")), ("reason", _string))
_allow = _strict(("action", _kind("allow")))
_hold = _strict(("action", _kind("hold")), ("reason", _string))

_attention_result = _variant("action", {"wake": _wake, "defer": _defer, "ignore": _ignore}, "ENVELOPE_UNKNOWN_KIND")
_delivery_result = _variant("action", {"allow": _allow, "hold": _hold}, "ENVELOPE_UNKNOWN_KIND")
_any_hook_result = _variant(
    "action",
    {"wake": _wake, "defer": _defer, "ignore": _ignore, "allow": _allow, "hold": _hold},
    "ENVELOPE_UNKNOWN_KIND",
)
_HOOK_IO = {
    "attention.plan": (_attention_input, _attention_result),
    "delivery.review": (_delivery_input, _delivery_result),
}

# -- host requests ----------------------------------------------------------------------------

_string_array = _array(_string)
_evidence_refs = _check(
    _check(_string_array, lambda refs: len(refs) > 0, "ENVELOPE_INVALID_FIELD", "at least one ref"),
    lambda refs: len(refs) <= MAX_EVIDENCE_REFS,
    "ENVELOPE_LIMIT_EXCEEDED",
    f"at most {MAX_EVIDENCE_REFS} refs",
)
_argv = _check(_string_array, lambda argv: len(argv) > 0, "ENVELOPE_INVALID_FIELD", "a non-empty argv")
_any_array = _array(_unknown)
_peer_open = (("mode", _string), ("evidence", _any_array))


def _non_empty_text(limit: int) -> Validator:
    def validate(value: Any, path: Path) -> str:
        _string(value, path)
        if len(value) == 0:
            _fail("ENVELOPE_INVALID_FIELD", path, value, "a non-empty string")
        if not _fits(value, limit):
            _fail("ENVELOPE_LIMIT_EXCEEDED", path, value, f"at most {limit} UTF-8 bytes")
        return value

    return validate


_peer_send = (
    ("peer_id", _identifier),
    ("request_id", _identifier),
    ("content", _non_empty_text(MAX_PEER_CONTENT_BYTES)),
    ("evidence", _any_array),
)


#: An orientation scope (C11): ``{"kind": "global"}`` or ``{"kind": "session", "session_id": id}``.
_scope = _variant(
    "kind",
    {
        "global": _strict(("kind", _kind("global"))),
        "session": _strict(("kind", _kind("session")), ("session_id", _identifier)),
    },
    "ENVELOPE_UNKNOWN_KIND",
)


def _method(name: str, *fields: _Field | tuple[str, Validator]) -> tuple[str, Validator]:
    return name, _strict(("method", _kind(name)), *fields)


_REQUESTS = dict(
    [
        _method("local.send", ("text", _bounded_text(MAX_SEND_TEXT_BYTES))),
        _method("runtime.wait", ("seconds", _nullable(_positive_up_to(MAX_WAIT_SECONDS))), ("reason", _string)),
        _method("hooks.list"),
        _method("hooks.describe", ("slot", _picklist(*HOOK_SLOTS))),
        _method("runtime.inspect"),
        _method("runtime.instructions"),
        _method("skills.index"),
        _method("skills.load", ("id", _string)),
        _method("workspace.info"),
        _method(
            "workspace.run",
            ("argv", _argv),
            _opt("cwd", _string),
            _opt("env", _string_map),
            _opt("timeout_ms", _integer(1, MAX_RUN_TIMEOUT_MS)),
            _opt("max_output_bytes", _integer(1, MAX_RUN_OUTPUT_BYTES)),
        ),
        _method("evidence.resolve", ("refs", _evidence_refs)),
        _method("behavior.activate", ("path", _string), ("expected_epoch", _integer(0))),
        _method(
            "maintenance.originate",
            ("purpose", _non_empty_text(MAX_WORK_ITEM_TEXT_BYTES)),
            ("reason", _non_empty_text(MAX_WORK_ITEM_TEXT_BYTES)),
            ("evidence_refs", _string_array),
        ),
        _method("maintenance.assess", ("work_item_id", _identifier), ("outcome", _picklist(*WORK_ITEM_OUTCOMES))),
        _method(
            "orientation.stage",
            ("candidate_id", _identifier),
            ("text", _non_empty_text(MAX_CANDIDATE_TEXT_BYTES)),
            ("target", _identifier),
            ("scope", _scope),
        ),
        _method("orientation.current", ("scope", _scope)),
        _method("orientation.adopt", ("candidate_id", _identifier), ("operation_id", _identifier)),
        _method("frontier.select"),
        _method("peer.open", *_peer_open),
        _method("agents.open", *_peer_open),
        _method("peer.send", *_peer_send),
        _method("peer.message", *_peer_send),
        _method("peer.result", ("request_id", _identifier), ("wait_ms", _integer(0, MAX_PEER_WAIT_MS))),
        _method("peer.submit_result", ("request_id", _identifier), ("result", _object_value)),
        _method("peer.cancel", ("request_id", _identifier)),
        _method("peer.get", ("peer_id", _identifier)),
        _method("peer.list"),
        _method("peer.stop", ("peer_id", _identifier), ("drain", _boolean)),
        _method("remote.ensure", ("target", _string)),
        _method(
            "remote.call",
            ("target", _string),
            ("namespace_id", _identifier),
            ("namespace_generation", _identifier),
            ("operation_id", _identifier),
            ("operation", _string),
            ("payload", _object_value),
        ),
        _method(
            "remote.cancel",
            ("namespace_id", _identifier),
            ("namespace_generation", _identifier),
            ("operation_id", _identifier),
        ),
        _method("remote.close", ("namespace_id", _identifier), ("namespace_generation", _identifier)),
    ]
)

#: Every host request method name, aliases (``agents.open``, ``peer.message``) included.
HOST_REQUEST_METHODS = tuple(_REQUESTS)

_host_request = _variant("method", _REQUESTS, "ENVELOPE_UNKNOWN_METHOD")

# -- messages ---------------------------------------------------------------------------------

_token = _check(
    _check(_string, lambda token: len(token) > 0, "ENVELOPE_INVALID_FIELD", "a non-empty token"),
    lambda token: _fits(token, MAX_TOKEN_BYTES),
    "ENVELOPE_LIMIT_EXCEEDED",
    f"at most {MAX_TOKEN_BYTES} UTF-8 bytes",
)
_runtime_version = _check(
    _check(_string, lambda version: len(version) > 0, "ENVELOPE_INVALID_FIELD", "a non-empty version"),
    lambda version: _fits(version, MAX_RUNTIME_VERSION_BYTES),
    "ENVELOPE_LIMIT_EXCEEDED",
    f"at most {MAX_RUNTIME_VERSION_BYTES} UTF-8 bytes",
)
_slots = _check(
    _array(_picklist(*HOOK_SLOTS)),
    lambda slots: len(set(slots)) == len(slots),
    "ENVELOPE_INVALID_FIELD",
    "no duplicate slots",
)
_hello_fields = _strict(
    ("kind", _kind("hello")),
    ("token", _token),
    ("role", _picklist(*WORKER_ROLES)),
    ("revision", _nullable(_digest)),
    ("slots", _slots),
    ("skills", _nullable(_digest)),
    # Optional, so a C3 hello without it stays valid; the host compares it with its own version.
    _opt("runtime_version", _runtime_version),
)


def _hello(value: Any, path: Path) -> dict:
    hello = _hello_fields(value, path)
    workbench = hello["role"] == "workbench"
    if not (hello["revision"] is None if workbench else is_digest(hello["revision"])):
        _fail("ENVELOPE_ROLE_MISMATCH", (*path, "revision"), hello["revision"], "null for workbench, a digest for hooks")
    if len(hello["slots"]) != (0 if workbench else len(HOOK_SLOTS)):
        _fail(
            "ENVELOPE_ROLE_MISMATCH",
            (*path, "slots"),
            hello["slots"],
            '[] for workbench, exactly ["attention.plan","delivery.review"] (any order) for hooks',
        )
    return hello


def _total_text_fits(records: list) -> bool:
    total = 0
    for item in records:
        total += utf8_length(item["text"])
        if total > MAX_OUTPUT_TEXT_BYTES:
            return False
    return True


_output = _check(
    _check(
        _array(_strict(("stream", _picklist(*OUTPUT_STREAMS)), ("text", _string))),
        lambda records: len(records) <= MAX_OUTPUT_RECORDS,
        "ENVELOPE_LIMIT_EXCEEDED",
        f"at most {MAX_OUTPUT_RECORDS} records",
    ),
    _total_text_fits,
    "ENVELOPE_LIMIT_EXCEEDED",
    f"at most {MAX_OUTPUT_TEXT_BYTES} UTF-8 bytes of text in all",
)

# -- rich display (C20) -------------------------------------------------------------------------

# RFC 6838 restricted names, lowercase only (a bundle's keys are compared as strings, so one spelling).
_MIME = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+\-]*/[a-z0-9][a-z0-9!#$&^_.+\-]*")
_BASE64_BODY = re.compile(r"[A-Za-z0-9+/]*")
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_SIGNATURES = {"image/png": b"\x89PNG\r\n\x1a\n", "image/jpeg": b"\xff\xd8\xff"}
_MIME_EXPECTED = "a MIME type: lowercase type/subtype of at most 255 characters, not klbr/*"
_METADATA_KEY_EXPECTED = (
    f"a MIME type: lowercase type/subtype of at most 255 characters (of klbr/*, only {DISPLAY_OMITTED_KEY})"
)


def is_mime_type(value: Any) -> bool:
    """True for a MIME type a display bundle may use as a key: lowercase ``type/subtype``, at most 255 characters."""
    return isinstance(value, str) and len(value) <= MAX_MIME_TYPE_LENGTH and _MIME.fullmatch(value) is not None


def is_encoded_image(mime: str, text: str) -> bool:
    """True when ``text`` is canonical base64 (RFC 4648 section 4: padded, no line breaks, zero pad
    bits) of bytes starting with ``mime``'s signature (``image/png``, ``image/jpeg``)."""
    signature = _SIGNATURES.get(mime)
    if signature is None or not isinstance(text, str) or not text or len(text) % 4:
        return False
    pad = 2 if text.endswith("==") else 1 if text.endswith("=") else 0
    body = text[:-pad] if pad else text
    if _BASE64_BODY.fullmatch(body) is None:
        return False
    if pad and _ALPHABET.index(body[-1]) % (16 if pad == 2 else 4):
        return False
    return _decode_head(body, len(signature)) == signature


def _decode_head(body: str, count: int) -> bytes:
    """The first ``count`` bytes of unpadded base64 ``body`` (fewer when it holds fewer)."""
    out = bytearray()
    bits = value = 0
    for char in body:
        if len(out) >= count:
            break
        value = ((value << 6) | _ALPHABET.index(char)) & 0xFFFF
        bits += 6
        if bits >= 8:
            bits -= 8
            out.append((value >> bits) & 0xFF)
    return bytes(out)


def _data_key(key: Any) -> bool:
    return is_mime_type(key) and not key.startswith("klbr/")


def _display_data(value: Any, path: Path) -> dict:
    _object_value(value, path)
    if "text/plain" not in value:
        _fail("ENVELOPE_MISSING_FIELD", (*path, "text/plain"), _MISSING, "a text/plain representation")
    for key in _js_key_order(value):
        item = value[key]
        if not _data_key(key):
            _fail("ENVELOPE_DISPLAY_MIME", (*path, key), key, _MIME_EXPECTED)
        if not isinstance(item, str):
            _fail("ENVELOPE_INVALID_FIELD", (*path, key), item, "a string")
        if key in BINARY_DISPLAY_MIMES and not is_encoded_image(key, item):
            _fail("ENVELOPE_DISPLAY_ENCODING", (*path, key), item, "canonical base64 of bytes in that image format")
    return value


def _omitted_bytes(value: Any) -> bool:
    # Number.isSafeInteger: an integral number (1 or 1.0, never a bool) within 2**53 - 1.
    if not _is_number(value):
        return False
    integral = isinstance(value, int) or (math.isfinite(value) and value.is_integer())
    return integral and 1 <= value <= _MAX_SAFE_INTEGER


def _display_metadata(value: Any, path: Path) -> dict:
    _object_value(value, path)
    for key in _js_key_order(value):
        item = value[key]
        if not is_mime_type(key) or (key.startswith("klbr/") and key != DISPLAY_OMITTED_KEY):
            _fail("ENVELOPE_DISPLAY_MIME", (*path, key), key, _METADATA_KEY_EXPECTED)
        if not isinstance(item, dict):
            _fail("ENVELOPE_NOT_OBJECT", (*path, key), item, "an object")
        if key != DISPLAY_OMITTED_KEY:
            continue
        if not item:
            _fail("ENVELOPE_INVALID_FIELD", (*path, key), item, "at least one omitted MIME type")
        for mime in _js_key_order(item):
            if not _data_key(mime):
                _fail("ENVELOPE_DISPLAY_MIME", (*path, key, mime), mime, _MIME_EXPECTED)
            if not _omitted_bytes(item[mime]):
                _fail("ENVELOPE_INVALID_FIELD", (*path, key, mime), item[mime], "an integer >= 1 (the bytes omitted)")
    return value


def _seq_within_cell(value: Any, path: Path) -> int:
    seq = _integer(0)(value, path)
    if seq >= MAX_DISPLAYS_PER_CELL:
        _fail(
            "ENVELOPE_LIMIT_EXCEEDED",
            path,
            seq,
            f"at most {MAX_DISPLAYS_PER_CELL} displays per cell (seq < {MAX_DISPLAYS_PER_CELL})",
        )
    return seq


_display_fields = _strict(
    ("kind", _kind("display")),
    ("id", _identifier),
    ("seq", _seq_within_cell),
    ("data", _display_data),
    ("metadata", _display_metadata),
)


def _display(value: Any, path: Path) -> dict:
    message = _display_fields(value, path)
    # The one rule across fields, after unknown fields: an omitted type is not also sent (text/plain, cut, may be).
    omitted = message["metadata"].get(DISPLAY_OMITTED_KEY)
    if omitted is not None:
        for mime in _js_key_order(omitted):
            if mime in message["data"] and mime != "text/plain":
                _fail(
                    "ENVELOPE_INVALID_FIELD",
                    (*path, "metadata", DISPLAY_OMITTED_KEY, mime),
                    mime,
                    "a MIME type absent from data (only text/plain, cut to fit, may be in both)",
                )
    return message


_completed_result = _variant(
    "kind",
    {
        "cell": _strict(
            ("kind", _kind("cell")),
            ("status", _picklist(*CELL_STATUSES)),
            ("output", _output),
            ("truncated_bytes", _integer(0)),
            ("error", _nullable(_bounded_text(MAX_ERROR_BYTES))),
            # C20: present exactly when the worker negotiated --display (DisplaySequence checks that).
            _opt("displays_dropped", _integer(0)),
        ),
        "hook": _strict(("kind", _kind("hook")), ("value", _any_hook_result)),
        "failed": _strict(("kind", _kind("failed")), ("error", _bounded_text(MAX_ERROR_BYTES))),
    },
    "ENVELOPE_UNKNOWN_KIND",
)

_host_reply = _variant(
    "kind",
    {
        "ok": _strict(("kind", _kind("ok")), ("value", _unknown)),
        "error": _strict(("kind", _kind("error")), ("code", _error_code), ("message", _string)),
    },
    "ENVELOPE_UNKNOWN_KIND",
)

_invoke = _variant(
    "slot",
    {
        slot: _strict(("kind", _kind("invoke")), ("id", _identifier), ("slot", _kind(slot)), ("input", schemas[0]))
        for slot, schemas in _HOOK_IO.items()
    },
    "ENVELOPE_INVALID_FIELD",
)

_MESSAGES: dict[str, Validator] = {
    "hello": _hello,
    "execute": _strict(("kind", _kind("execute")), ("id", _identifier), ("code", _bounded_text(MAX_CELL_SOURCE_BYTES))),
    "invoke": _invoke,
    "host_request": _strict(
        ("kind", _kind("host_request")),
        ("id", _identifier),
        ("execution_id", _identifier),
        ("request", _host_request),
    ),
    "host_reply": _strict(
        ("kind", _kind("host_reply")),
        ("id", _identifier),
        ("execution_id", _identifier),
        ("reply", _host_reply),
    ),
    "completed": _strict(("kind", _kind("completed")), ("id", _identifier), ("result", _completed_result)),
    # C16 live output; the rules across messages are OutputSequence's.
    "output": _strict(
        ("kind", _kind("output")),
        ("id", _identifier),
        ("seq", _integer(0)),
        ("stream", _picklist(*LIVE_OUTPUT_STREAMS)),
        ("text", _non_empty_text(MAX_LIVE_OUTPUT_TEXT_BYTES)),
        ("dropped_bytes", _integer(0)),
    ),
    # C20 rich display; the rules across messages are DisplaySequence's.
    "display": _display,
    "interrupt": _strict(("kind", _kind("interrupt")), ("id", _identifier)),
    "shutdown": _strict(("kind", _kind("shutdown"))),
}
_message = _variant("kind", _MESSAGES, "ENVELOPE_UNKNOWN_KIND")


def _version(value: Any, path: Path) -> int:
    if not _is_number(value) or value != PROTOCOL_VERSION:
        _fail("ENVELOPE_BAD_VERSION", path, value, f"version {PROTOCOL_VERSION}")
    return PROTOCOL_VERSION


def _expecting(code: str, expected: str | None) -> Validator:
    if expected is None:
        return _identifier

    def validate(value: Any, path: Path) -> str:
        _identifier(value, path)
        if value != expected:
            _fail(code, path, value, repr(expected))
        return value

    return validate


_envelope = _strict(
    ("version", _version),
    ("session_id", _identifier),
    ("generation", _identifier),
    ("message", _message),
)

# -- public entry points ----------------------------------------------------------------------


def parse_envelope(
    value: Any,
    expected_session: str | None = None,
    expected_generation: str | None = None,
) -> dict:
    """Validate a decoded frame value as an envelope and return a fresh validated copy.

    When ``expected_session`` / ``expected_generation`` is given, a different one raises
    ``ENVELOPE_SESSION_MISMATCH`` / ``ENVELOPE_GENERATION_MISMATCH`` (checked at that field).
    """
    if expected_session is None and expected_generation is None:
        return _envelope(value, ())
    schema = _strict(
        ("version", _version),
        ("session_id", _expecting("ENVELOPE_SESSION_MISMATCH", expected_session)),
        ("generation", _expecting("ENVELOPE_GENERATION_MISMATCH", expected_generation)),
        ("message", _message),
    )
    return schema(value, ())


def parse_host_request(value: Any) -> dict:
    """Validate one host request object (``{"method": ..., ...}``)."""
    return _host_request(value, ())


# -- reply values (C11) ------------------------------------------------------------------------

_CURRENT_SOURCE = _strict(
    ("target", _identifier),
    ("candidate_id", _identifier),
    ("digest", _digest),
    ("text", _string),
    ("adopted_at_ms", _integer(0)),
    ("execution_id", _identifier),
    ("operation_id", _identifier),
)
_REPLY_VALUES = {
    "maintenance.originate": _strict(("work_item_id", _identifier), ("status", _picklist("open"))),
    "maintenance.assess": _strict(
        ("work_item_id", _identifier), ("status", _picklist("open", "closed")), ("outcome", _picklist(*WORK_ITEM_OUTCOMES))
    ),
    "orientation.stage": _strict(
        ("candidate_id", _identifier),
        ("digest", _digest),
        ("target", _identifier),
        ("scope", _scope),
        ("status", _picklist("staged", "adopted")),
    ),
    "orientation.current": _strict(("scope", _scope), ("sources", _array(_CURRENT_SOURCE))),
    "orientation.adopt": _strict(
        ("candidate_id", _identifier),
        ("target", _identifier),
        ("digest", _digest),
        ("scope", _scope),
        ("status", _picklist("adopted")),
        ("header_digest", _nullable(_digest)),
    ),
}


def parse_reply_value(method: str, value: Any) -> dict:
    """Validate the ok value of a reply to ``method`` (the C11 shapes); ValueError for another method."""
    if method not in _REPLY_VALUES:
        raise ValueError(f"no reply shape is pinned for {method!r}")
    return _REPLY_VALUES[method](value, ())


def _slot_io(slot: str) -> tuple[Validator, Validator]:
    if slot not in _HOOK_IO:
        raise ValueError(f"unknown hook slot {slot!r}")
    return _HOOK_IO[slot]


def parse_hook_input(slot: str, value: Any) -> dict:
    """Validate the typed input of ``slot`` (C6); ValueError for an unknown slot."""
    return _slot_io(slot)[0](value, ())


def parse_hook_result(slot: str, value: Any) -> dict:
    """Validate the result of ``slot`` (C6); ValueError for an unknown slot."""
    return _slot_io(slot)[1](value, ())


_hello_only = _variant("kind", {"hello": _hello}, "ENVELOPE_UNKNOWN_KIND")


def parse_hello(message: Any, role: str | None = None) -> dict:
    """Validate a ``hello`` message; another kind is ENVELOPE_UNKNOWN_KIND, another role ENVELOPE_ROLE_MISMATCH."""
    if role is not None and role not in WORKER_ROLES:
        raise ValueError(f"unknown worker role {role!r}")
    hello = _hello_only(message, ())
    if role is not None and hello["role"] != role:
        _fail("ENVELOPE_ROLE_MISMATCH", ("role",), hello["role"], repr(role))
    return hello


def make_envelope(session_id: str, generation: str, message: dict) -> dict:
    """Build a validated envelope around ``message``; raises EnvelopeError when it is not valid."""
    return parse_envelope(
        {"version": PROTOCOL_VERSION, "session_id": session_id, "generation": generation, "message": message}
    )


def canonical_method(name: str) -> str:
    """The canonical name of a method: ``agents.open`` -> ``peer.open``, ``peer.message`` -> ``peer.send``."""
    return METHOD_ALIASES.get(name, name)


# -- live output across messages (C16) ----------------------------------------------------------


class OutputSequence:
    """Per-connection checker of ``output`` messages (C16), the twin of TypeScript's ``OutputSequence``.

    ``sent`` sees what the host sends (an ``execute`` starts an operation at seq 0); ``received``
    sees what the worker sends (valid messages) and raises :class:`EnvelopeError` (paths relative
    to the message) when an ``output`` is not negotiated, names no running ``execute``, follows its
    ``completed``, or is out of order. Memory is bounded: the running operations and the last
    ``OUTPUT_SEQUENCE_MEMORY`` completed ids (an older id reads as unknown, not as completed).
    """

    __slots__ = ("negotiated", "_running", "_completed")

    def __init__(self, negotiated: bool) -> None:
        self.negotiated = negotiated
        self._running: dict[str, int] = {}
        self._completed: dict[str, None] = {}  # insertion-ordered, like the TypeScript Set

    def sent(self, message: dict) -> None:
        """The host sent ``message`` to the worker."""
        if message.get("kind") != "execute" or "id" not in message:
            return
        self._completed.pop(message["id"], None)
        self._running[message["id"]] = 0

    def received(self, message: dict) -> None:
        """The worker sent ``message``; raises EnvelopeError for an ``output`` that breaks C16."""
        kind = message.get("kind")
        if kind == "output":
            self._output(message)
        elif kind == "completed" and self._running.pop(message.get("id"), None) is not None:
            self._remember(message["id"])

    def next_seq(self, operation_id: str) -> int | None:
        """The seq the next ``output`` of ``operation_id`` must carry; None when it is not running."""
        return self._running.get(operation_id)

    def _output(self, message: dict) -> None:
        if not self.negotiated:
            _fail(
                "ENVELOPE_OUTPUT_NOT_NEGOTIATED",
                ("kind",),
                message["kind"],
                "no output: the worker was not started with --live-output",
            )
        operation_id = message["id"]
        expected = self._running.get(operation_id)
        if expected is None:
            if operation_id in self._completed:
                _fail(
                    "ENVELOPE_OUTPUT_AFTER_COMPLETED",
                    ("id",),
                    operation_id,
                    "the id of a running execute (this one completed)",
                )
            _fail("ENVELOPE_OUTPUT_UNKNOWN_OPERATION", ("id",), operation_id, "the id of a running execute")
        if message.get("seq") != expected or type(message.get("seq")) is bool:
            _fail("ENVELOPE_OUTPUT_SEQUENCE", ("seq",), message.get("seq"), f"seq {expected}")
        self._running[operation_id] = expected + 1

    def _remember(self, operation_id: str) -> None:
        self._completed[operation_id] = None
        if len(self._completed) > OUTPUT_SEQUENCE_MEMORY:
            del self._completed[next(iter(self._completed))]


# -- rich display across messages (C20) -----------------------------------------------------------


class DisplaySequence:
    """Per-connection checker of ``display`` messages (C20), the twin of TypeScript's ``DisplaySequence``.

    ``sent`` sees what the host sends (an ``execute`` starts an operation at seq 0); ``received``
    sees what the worker sends (valid messages) and raises :class:`EnvelopeError` (paths relative
    to the message) when a ``display`` is not negotiated, names no running ``execute``, follows its
    ``completed`` or is out of order, and when a cell completion's ``displays_dropped`` is there
    without ``--display``, missing with it, or above 0 before the cell sent all 32 it may.
    """

    __slots__ = ("negotiated", "_running", "_completed")

    def __init__(self, negotiated: bool) -> None:
        self.negotiated = negotiated
        self._running: dict[str, int] = {}
        self._completed: dict[str, None] = {}

    def sent(self, message: dict) -> None:
        """The host sent ``message`` to the worker."""
        if message.get("kind") != "execute" or "id" not in message:
            return
        self._completed.pop(message["id"], None)
        self._running[message["id"]] = 0

    def received(self, message: dict) -> None:
        """The worker sent ``message``; raises EnvelopeError when it breaks C20."""
        kind = message.get("kind")
        if kind == "display":
            self._display(message)
        elif kind == "completed":
            sent = self._running.pop(message.get("id"), None)
            if sent is None:
                return
            self._remember(message["id"])
            result = message.get("result")
            if isinstance(result, dict) and result.get("kind") == "cell":
                self._dropped(result.get("displays_dropped"), sent)

    def next_seq(self, operation_id: str) -> int | None:
        """The seq the next ``display`` of ``operation_id`` must carry; None when it is not running."""
        return self._running.get(operation_id)

    def _display(self, message: dict) -> None:
        if not self.negotiated:
            _fail("ENVELOPE_DISPLAY_NOT_NEGOTIATED", ("kind",), message["kind"], "no display: the worker was not started with --display")
        operation_id = message["id"]
        expected = self._running.get(operation_id)
        if expected is None:
            if operation_id in self._completed:
                _fail("ENVELOPE_DISPLAY_AFTER_COMPLETED", ("id",), operation_id, "the id of a running execute (this one completed)")
            _fail("ENVELOPE_DISPLAY_UNKNOWN_OPERATION", ("id",), operation_id, "the id of a running execute")
        if message.get("seq") != expected or type(message.get("seq")) is bool:
            _fail("ENVELOPE_DISPLAY_SEQUENCE", ("seq",), message.get("seq"), f"seq {expected}")
        self._running[operation_id] = expected + 1

    def _dropped(self, count: Any, sent: int) -> None:
        path = ("result", "displays_dropped")
        if not self.negotiated:
            if count is not None:
                _fail("ENVELOPE_DISPLAY_NOT_NEGOTIATED", path, count, "no displays_dropped: the worker was not started with --display")
            return
        if count is None:
            _fail("ENVELOPE_MISSING_FIELD", path, _MISSING, "displays_dropped (the worker was started with --display)")
        if count > 0 and sent < MAX_DISPLAYS_PER_CELL:
            _fail("ENVELOPE_DISPLAY_DROPPED", path, count, f"0: the cell sent {sent} of the {MAX_DISPLAYS_PER_CELL} displays it may")

    def _remember(self, operation_id: str) -> None:
        self._completed[operation_id] = None
        if len(self._completed) > OUTPUT_SEQUENCE_MEMORY:
            del self._completed[next(iter(self._completed))]
