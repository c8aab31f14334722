"""The wire codec: a 4-byte big-endian length, then a strict UTF-8 JSON payload (C1).

Mirrors ``@klbr/frame``: the same bytes give the same value or the same error code. When a
payload breaks several rules at once the code is the first of ``FRAME_EMPTY`` /
``FRAME_TOO_LARGE``, ``FRAME_INVALID_UTF8``, ``FRAME_BOM``, ``FRAME_TOO_DEEP`` (a lexical
bracket count, so no parser ever recurses deeply), ``FRAME_INVALID_JSON`` (``NaN`` and
``Infinity`` are not JSON tokens), ``FRAME_LONE_SURROGATE``, ``FRAME_NON_FINITE``,
``FRAME_UNSAFE_INTEGER``, ``FRAME_DUPLICATE_KEY``.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import struct
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from array import array
from itertools import accumulate
from typing import Any

__all__ = [
    "FRAME_ERROR_CODES",
    "HEADER_BYTES",
    "MAX_DEPTH",
    "MAX_FRAME_BYTES",
    "MAX_SAFE_INTEGER",
    "FrameDecoder",
    "FrameError",
    "decode_payload",
    "encode_frame",
    "encode_payload",
    "read_frame",
]

#: Largest payload a frame may carry, in bytes (the header is not counted).
MAX_FRAME_BYTES = 1_048_576
#: Deepest nesting of arrays/objects; the top-level container is depth 1.
MAX_DEPTH = 128
#: Size of the big-endian length header.
HEADER_BYTES = 4
#: Largest integer literal magnitude both languages read exactly: 2**53 - 1.
MAX_SAFE_INTEGER = 2**53 - 1

#: Every stable code a FrameError carries (the same strings as ``@klbr/frame``).
FRAME_ERROR_CODES = (
    "FRAME_EMPTY",
    "FRAME_TOO_LARGE",
    "FRAME_TRUNCATED",
    "FRAME_INVALID_UTF8",
    "FRAME_BOM",
    "FRAME_TOO_DEEP",
    "FRAME_INVALID_JSON",
    "FRAME_LONE_SURROGATE",
    "FRAME_NON_FINITE",
    "FRAME_UNSAFE_INTEGER",
    "FRAME_DUPLICATE_KEY",
    "FRAME_UNENCODABLE",
    "FRAME_POISONED",
)

_SHOWN = 40
# Reads a header where it lies: no slice, and a third of int.from_bytes(data[at:at + 4], "big").
_read_length = struct.Struct(">I").unpack_from


class FrameError(Exception):
    """The one frame error; ``code`` is stable, the message names the offending value.

    ``values`` holds the values ``FrameDecoder.feed`` decoded from the same chunk before the
    failing frame (empty elsewhere), so chunking never changes what a reader sees.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.values: list[Any] = []

    def __str__(self) -> str:
        return f"{self.code}: {self.args[0]}"


def _shown(literal: str) -> str:
    if len(literal) > _SHOWN:
        return f"{literal[:_SHOWN]}... ({len(literal)} characters)"
    return literal


def _check_length(length: int) -> None:
    if length == 0:
        raise FrameError("FRAME_EMPTY", "frame length 0: a payload must hold at least 1 byte")
    if length > MAX_FRAME_BYTES:
        raise FrameError("FRAME_TOO_LARGE", f"frame length {length} exceeds {MAX_FRAME_BYTES} bytes")


# --- decoding ---------------------------------------------------------------------------------

# The lexical depth rule shared with the TypeScript scanner, applied to the UTF-8 bytes (every
# character it looks at is ASCII, and no multi-byte sequence holds an ASCII byte): a backslash,
# in a string or not, hides the next character; outside a string "[" and "{" nest one deeper,
# "]" and "}" one shallower (depth may go negative); '"' starts or ends a string, and an
# unterminated string runs to the end.
_ESCAPE_PAIR = re.compile(rb"\\.", re.S)
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{}')
_STRING_BODY = re.compile(rb'"[^"]*(?:"|\Z)')
_NOT_OPENER = bytes(b for b in range(256) if b not in b"[{")
_DEPTH_STEP = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_SURROGATE = re.compile("[\ud800-\udfff]")
# A \u escape naming a surrogate; only a hint, the parsed strings are the authority.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _too_deep(data: bytes) -> bool:
    # One pass (translate) rather than two counts: few payloads hold 129 openers at all.
    if len(data.translate(None, _NOT_OPENER)) <= MAX_DEPTH:
        return False
    if b"\\" in data:
        data = _ESCAPE_PAIR.sub(b"", data)
    # Only quotes and brackets are left; string bodies now hold no quote, so dropping every ""
    # (an empty string, or the seam between two strings) keeps the outside intact.
    structure = data.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    if b'"' in structure:
        structure = _STRING_BODY.sub(b"", structure)
    brackets = structure.translate(_DEPTH_STEP)
    return max(accumulate(array("b", brackets)), default=0) > MAX_DEPTH


class _Violation(Exception):
    """Raised by the fast path when it sees a possible violation; the slow path finds the code."""


def _unsafe(literal: str) -> bool:
    digits = len(literal) - (literal[0] == "-")
    return digits > 16 or abs(int(literal)) > MAX_SAFE_INTEGER


def _constant(name: str) -> Any:
    raise FrameError("FRAME_INVALID_JSON", f"invalid JSON: {name} is not a JSON value")


def _fast_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _Violation
    return result


def _fast_int(literal: str) -> int:
    if len(literal) > 15 and _unsafe(literal):
        raise _Violation
    return int(literal)


def _fast_float(literal: str) -> float:
    value = float(literal)
    if value == math.inf or value == -math.inf:
        raise _Violation
    return value


def _fast_constant(_name: str) -> Any:
    raise _Violation  # NaN, Infinity: not JSON; the slow path says so


# The fast path parses with json's C scanner and then checks what it returned, choosing by the
# text's shape (a speed choice only: each way is exact, and anything doubtful goes to the slow
# path, which finds the precise code):
# - short texts: no hooks at all; one walk checks numbers and depth and counts keys, and the
#   colons of the text account for the keys (each key has one);
# - long texts of a few long strings: a hook per object finds duplicate keys, the walk checks
#   numbers and depth (it visits few values);
# - long texts of many small values: hooks per object and per number and the lexical depth
#   count, since a walk of every value would cost more than that pass.
# Lone surrogates need a \u escape (the text was decoded fatally): only a text holding a
# backslash is searched for one, and only a text holding a surrogate escape has its strings read.
_SCAN_PLAIN = json.JSONDecoder().scan_once
_SCAN_PAIRS = json.JSONDecoder(object_pairs_hook=_fast_pairs).scan_once
_SCAN_HOOKED = json.JSONDecoder(
    object_pairs_hook=_fast_pairs, parse_int=_fast_int, parse_float=_fast_float, parse_constant=_fast_constant
).scan_once
_SHORT = 2048
_SAMPLE = 1024
_DENSE_COMMAS = _SAMPLE // 48


def _walk(value: Any, depth: int, _max: int = MAX_SAFE_INTEGER, _inf: float = math.inf, _str: type = str) -> int:
    """Keys in a container parsed from JSON; raises _Violation on a number or a depth to doubt."""
    if depth > MAX_DEPTH:
        raise _Violation
    if type(value) is dict:
        keys = len(value)
        items: Any = value.values()
    else:
        keys = 0
        items = value
    for item in items:
        kind = type(item)
        if kind is _str:
            continue
        if kind is int:
            if item > _max or item < -_max:
                raise _Violation
        elif kind is dict or kind is list:
            keys += _walk(item, depth + 1)
        elif kind is float:
            if item == _inf or item == -_inf or item != item:
                raise _Violation
    return keys


def _colons_in_strings(value: Any) -> int:
    count = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is str:
            count += item.count(":")
        elif type(item) is dict:
            stack.extend(item)
            stack.extend(item.values())
        elif type(item) is list:
            stack.extend(item)
    return count


def _keys_accounted(text: str, value: Any, keys: int) -> bool:
    # A colon more than keys is in a string (counted in the parsed strings, exact unless an
    # escape spells one) or belongs to a dropped duplicate.
    return "\\u003" not in text and keys == text.count(":") - _colons_in_strings(value)


def _decode_long(text: str, data: bytes | bytearray | memoryview) -> Any:
    if text.count(",", 0, _SAMPLE) < _DENSE_COMMAS:
        value, end = _SCAN_PAIRS(text, 0)
        if end != len(text):
            raise _Violation
        _walk([value], 0)
    else:
        value, end = _SCAN_HOOKED(text, 0)
        if end != len(text) or _too_deep(data if type(data) is bytes else bytes(data)):
            raise _Violation
    if "\\" in text and _SURROGATE_ESCAPE.search(data) and _first_lone_surrogate(value) is not None:
        raise _Violation
    return value


def _first_lone_surrogate(value: Any) -> str | None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def _check_surrogates(text: str, value: Any) -> None:
    if "\\u" in text:
        found = _first_lone_surrogate(value)
        if found is not None:
            raise FrameError(
                "FRAME_LONE_SURROGATE", f"lone surrogate escape in {_shown(ascii(found))}"
            )


def _parse_error(error: Exception) -> FrameError:
    return FrameError("FRAME_INVALID_JSON", f"invalid JSON: {error}")


def _recursion_error() -> FrameError:
    # Only reachable when the caller's own stack is nearly exhausted (depth is capped at 128).
    return FrameError("FRAME_TOO_DEEP", "nesting exhausted the interpreter's recursion limit")


def _slow_parse(text: str) -> Any:
    """Parses collecting every violation, then raises the one with precedence (depth is checked)."""
    non_finite: list[str] = []
    unsafe: list[str] = []
    duplicates: list[str] = []
    replaced: list[Any] = []

    def parse_int(literal: str) -> int:
        if _unsafe(literal):
            unsafe.append(literal)
            return 0
        return int(literal)

    def parse_float(literal: str) -> float:
        value = float(literal)
        if math.isinf(value):
            non_finite.append(literal)
        return value

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                duplicates.append(key)
                # dict() keeps the last value of a key: the ones it drops are kept aside, so a
                # lone surrogate in them still wins over the duplicate (precedence).
                replaced.extend(item for _, item in pairs)
                break
            seen.add(key)
        return dict(pairs)

    decoder = json.JSONDecoder(
        object_pairs_hook=pairs_hook, parse_int=parse_int, parse_float=parse_float, parse_constant=_constant
    )
    try:
        value = decoder.decode(text)
    except json.JSONDecodeError as error:
        raise _parse_error(error) from None
    except RecursionError:
        raise _recursion_error() from None
    _check_surrogates(text, [value, replaced])
    if non_finite:
        raise FrameError("FRAME_NON_FINITE", f"number literal {_shown(non_finite[0])} overflows a double")
    if unsafe:
        raise FrameError("FRAME_UNSAFE_INTEGER", f"integer literal {_shown(unsafe[0])} is beyond ±(2^53 - 1)")
    if duplicates:
        raise FrameError("FRAME_DUPLICATE_KEY", f"duplicate object key {json.dumps(_shown(duplicates[0]))}")
    return value


def _read_text(data: bytes | bytearray | memoryview) -> str:
    """The rules before JSON: length, UTF-8 (decoded fatally, no copy of a memoryview), BOM."""
    n = len(data)
    if n == 0 or n > MAX_FRAME_BYTES:
        _check_length(n)
    try:
        text = str(data, "utf-8")
    except UnicodeDecodeError as error:
        shown = bytes(data[error.start : error.start + 4]).hex(" ")
        raise FrameError("FRAME_INVALID_UTF8", f"invalid UTF-8 at byte {error.start} ({shown})") from None
    if text[:1] == "\ufeff":
        raise FrameError("FRAME_BOM", "payload starts with a byte-order mark (ef bb bf)")
    return text


def _decode_text_exhaustively(text: str) -> Any:
    if _too_deep(text.encode("utf-8")):
        raise FrameError("FRAME_TOO_DEEP", f"nesting deeper than {MAX_DEPTH}")
    return _slow_parse(text)


def decode_payload(data: bytes | bytearray | memoryview) -> Any:
    """Decodes one payload (no header) under the strict wire profile (C1)."""
    if 0 < len(data) <= _SHORT:
        # A short payload: written out here, not in functions (a call less per message; the
        # envelopes are most of the traffic). Anything this cannot settle, a bad byte, a BOM
        # (json's scanner refuses a text that does not start with a value) or a broken rule,
        # goes to _decode_checked, which decides from the start with the precise code.
        try:
            text = data.decode() if type(data) is bytes else str(data, "utf-8")
            value, end = _SCAN_PLAIN(text, 0)
            if end != len(text):
                raise _Violation  # trailing whitespace or data: the slow path reads it exactly
            # The walk checks numbers and depth and counts the keys, which the text's colons
            # must account for (each key has one).
            keys = _walk(value, 1) if type(value) is dict or type(value) is list else _walk([value], 0)
            if keys != text.count(":") and not _keys_accounted(text, value, keys):
                raise _Violation
            # A lone surrogate needs a \u escape (the text was decoded fatally), and an escape
            # a backslash: one memchr rules out most texts.
            if "\\" in text and "\\u" in text and _first_lone_surrogate(value) is not None:
                raise _Violation
            return value
        except (_Violation, ValueError, StopIteration, RecursionError):
            # json's errors (ValueError: also a literal over int's digit limit, and a bad
            # UTF-8 byte) and anything the fast path cannot settle.
            pass
    return _decode_checked(data)


def _decode_checked(data: bytes | bytearray | memoryview) -> Any:
    text = _read_text(data)
    if len(data) > _SHORT:
        try:
            return _decode_long(text, data)
        except (_Violation, ValueError, StopIteration, RecursionError):
            pass  # as in decode_payload: the exhaustive path decides, with the precise code
    return _decode_text_exhaustively(text)


def decode_payload_exhaustively(data: bytes | bytearray | memoryview) -> Any:
    """decode_payload without the fast path: every rule checked on the slow path (tests compare the two)."""
    return _decode_text_exhaustively(_read_text(data))


def _whole_frames(data: bytes, values: list[Any]) -> int:
    """Decodes the whole frames at the start of ``data`` into ``values``; returns where the rest starts.

    The rest (a frame cut short, or only part of a header) is left to :meth:`FrameDecoder._consume`,
    which also refuses a bad length as soon as its header is whole, as this does. A short payload
    is sliced out (a copy of at most 2 KiB, then ``bytes`` decoding, costs less than a view and
    decoding from it); a long one is decoded where it lies, never copied.
    """
    n = len(data)
    at = 0
    while n - at > HEADER_BYTES:
        start = at + HEADER_BYTES
        (length,) = _read_length(data, at)
        if length == 0 or length > MAX_FRAME_BYTES:
            _check_length(length)
        end = start + length
        if end > n:
            break
        values.append(decode_payload(data[start:end] if length <= _SHORT else memoryview(data)[start:end]))
        at = end
    return at


class FrameDecoder:
    """Streaming decoder: feed chunks of any size, get every whole value back in order.

    The length is checked from the 4 header bytes before any payload is buffered; a payload
    split across chunks is copied once into a buffer of exactly its length. After any error the
    decoder is poisoned: every later ``feed``/``eof`` raises ``FRAME_POISONED``.
    """

    def __init__(self) -> None:
        self._header = bytearray()
        self._payload: bytearray | None = None
        self._fill = 0
        self._poisoned = False

    @property
    def poisoned(self) -> bool:
        """True once an error has been raised; the decoder then refuses all further input."""
        return self._poisoned

    @property
    def buffered_bytes(self) -> int:
        """Bytes of the current, incomplete frame held so far (header bytes included)."""
        return len(self._header) if self._payload is None else HEADER_BYTES + self._fill

    def feed(self, data: bytes | bytearray | memoryview) -> list[Any]:
        """Feeds one chunk; returns the values of the frames it completed."""
        if self._poisoned:
            raise _poisoned_error()
        values: list[Any] = []
        try:
            # The common case: an idle decoder fed bytes that start at a frame (one whole frame, or
            # many): the whole frames are read straight from them, the rest as any chunk.
            if type(data) is bytes and self._payload is None and not self._header:
                at = _whole_frames(data, values)
                if at < len(data):
                    self._consume(memoryview(data)[at:], values)
                return values
            self._consume(memoryview(data).cast("B"), values)
        except FrameError as error:
            self._poison()
            error.values = values
            raise
        except BaseException:
            self._poison()
            raise
        return values

    def eof(self) -> None:
        """Declares the end of the stream: ``FRAME_TRUNCATED`` if it stopped inside a frame."""
        if self._poisoned:
            raise _poisoned_error()
        if self.buffered_bytes == 0:
            return
        if self._payload is None:
            message = f"stream ended inside a frame header ({len(self._header)} of {HEADER_BYTES} bytes)"
        else:
            message = f"stream ended inside a frame ({self._fill} of {len(self._payload)} payload bytes)"
        self._poison()
        raise FrameError("FRAME_TRUNCATED", message)

    def _poison(self) -> None:
        self._poisoned = True
        self._payload = None
        self._fill = 0
        self._header = bytearray()

    def _consume(self, view: memoryview, values: list[Any]) -> None:
        n = len(view)
        i = 0
        while i < n:
            payload = self._payload
            if payload is not None:
                take = min(len(payload) - self._fill, n - i)
                payload[self._fill : self._fill + take] = view[i : i + take]
                self._fill += take
                i += take
                if self._fill == len(payload):
                    self._payload = None
                    self._fill = 0
                    values.append(decode_payload(payload))
                continue
            if not self._header and n - i >= HEADER_BYTES:
                (length,) = _read_length(view, i)
                i += HEADER_BYTES
            else:
                take = min(HEADER_BYTES - len(self._header), n - i)
                self._header += view[i : i + take]
                i += take
                if len(self._header) < HEADER_BYTES:
                    return
                length = int.from_bytes(self._header, "big")
                self._header = bytearray()
            _check_length(length)
            if n - i >= length:
                values.append(decode_payload(view[i : i + length]))
                i += length
            else:
                self._payload = bytearray(length)
                self._payload[: n - i] = view[i:]
                self._fill = n - i
                i = n


def _poisoned_error() -> FrameError:
    return FrameError("FRAME_POISONED", "decoder is poisoned by an earlier error; open a new connection")


async def read_frame(reader: asyncio.StreamReader) -> Any | None:
    """Reads one frame's value; None only on a clean EOF at a frame boundary.

    The length is checked from the header before the payload is read, so a hostile header
    never makes the reader wait for or buffer more than one legal frame.
    """
    try:
        header = await reader.readexactly(HEADER_BYTES)
    except asyncio.IncompleteReadError as error:
        if not error.partial:
            return None
        raise FrameError(
            "FRAME_TRUNCATED",
            f"stream ended inside a frame header ({len(error.partial)} of {HEADER_BYTES} bytes)",
        ) from None
    length = int.from_bytes(header, "big")
    _check_length(length)
    try:
        payload = await reader.readexactly(length)
    except asyncio.IncompleteReadError as error:
        raise FrameError(
            "FRAME_TRUNCATED", f"stream ended inside a frame ({len(error.partial)} of {length} payload bytes)"
        ) from None
    return decode_payload(payload)


# --- encoding ---------------------------------------------------------------------------------

_SCALARS = (str, int, float, bool, type(None))


def _refuse(path: str, what: str) -> FrameError:
    return FrameError("FRAME_UNENCODABLE", f"cannot encode {what} at {path or 'the top level'}")


class _Walk:
    __slots__ = ("ancestors", "budget", "size")

    def __init__(self) -> None:
        self.ancestors: set[int] = set()
        self.budget = MAX_FRAME_BYTES
        # A lower bound of the payload bytes: every code point of a string or key is >= 1 byte.
        self.size = 0


def _check(value: Any, depth: int, path: str, walk: _Walk) -> None:
    walk.budget -= 1
    if walk.budget < 0:
        raise FrameError("FRAME_TOO_LARGE", f"value has more than {MAX_FRAME_BYTES} nodes, so it cannot fit a frame")
    kind = type(value)
    if kind is str:
        if _SURROGATE.search(value):
            raise _refuse(path, "a string with a lone surrogate")
        walk.size += len(value)
    elif kind is int:
        if abs(value) > MAX_SAFE_INTEGER:
            raise _refuse(path, f"the integer {value}, beyond ±(2^53 - 1)")
    elif kind is float:
        if not math.isfinite(value):
            raise _refuse(path, f"the non-finite number {value}")
    elif kind is bool or value is None:
        return
    elif kind is list or kind is dict:
        if id(value) in walk.ancestors:
            raise _refuse(path, "a cycle")
        if depth >= MAX_DEPTH:
            raise FrameError("FRAME_TOO_DEEP", f"nesting deeper than {MAX_DEPTH} at {path or 'the top level'}")
        walk.ancestors.add(id(value))
        if kind is list:
            for index, item in enumerate(value):
                _check(item, depth + 1, f"{path}[{index}]", walk)
        else:
            for key, item in value.items():
                if type(key) is not str:
                    raise _refuse(f"{path}.{key!r}", f"a {type(key).__name__} key")
                at = f"{path}.{key}"
                if _SURROGATE.search(key):
                    raise _refuse(at, "a key with a lone surrogate")
                walk.size += len(key)
                _check(item, depth + 1, at, walk)
        walk.ancestors.discard(id(value))
    else:
        raise _refuse(path, f"a {kind.__name__}")


class _Doubt(Exception):
    """Raised by the fast encoder's walk; the exact walk then judges the value."""


def _fast_size(value: Any, depth: int, size: int, _max: int = MAX_SAFE_INTEGER, _str: type = str) -> int:
    """``size`` plus a lower bound of a container's payload bytes; _Doubt on anything unusual.

    It only checks what json's C encoder would not refuse by itself: exact types (no tuple, no
    subclass, str keys), integers beyond ±(2**53 - 1), depth (a cycle passes it too), and a size
    that cannot fit. Non-finite floats make the encoder raise, lone surrogates the UTF-8 encode.
    """
    if depth >= MAX_DEPTH or size > MAX_FRAME_BYTES:
        raise _Doubt
    if type(value) is dict:
        for key in value:
            if type(key) is not _str:
                raise _Doubt
            size += len(key) + 3
        items: Any = value.values()
    else:
        items = value
    for item in items:
        kind = type(item)
        if kind is _str:
            size += len(item) + 3
        elif kind is int:
            if item > _max or item < -_max:
                raise _Doubt
            size += 2
        elif kind is dict or kind is list:
            size = _fast_size(item, depth + 1, size + 2)
        elif kind is float or kind is bool or item is None:
            size += 2
        else:
            raise _Doubt
    return size


# json.dumps(ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False)
# builds this encoder on every call; made once, it costs nothing per message.
_C_ENCODE = (
    c_make_encoder(None, None, encode_basestring, None, ":", ",", False, False, False)
    if c_make_encoder is not None
    else None
)


def _encode_fast(value: Any) -> bytes | None:
    kind = type(value)
    if kind is dict or kind is list:
        if _fast_size(value, 0, 2) > MAX_FRAME_BYTES:
            return None
    elif kind is int:
        if value > MAX_SAFE_INTEGER or value < -MAX_SAFE_INTEGER:
            return None
    elif not (kind is str or kind is float or kind is bool or value is None):
        return None
    # The encoder returns its text in chunks (a long one in several).
    data = "".join(_C_ENCODE(value, 0)).encode("utf-8")
    return data if len(data) <= MAX_FRAME_BYTES else None


def _encode_exactly(value: Any) -> bytes:
    walk = _Walk()
    _check(value, 0, "", walk)
    if walk.size > MAX_FRAME_BYTES:  # refuse before serializing all of it
        raise FrameError("FRAME_TOO_LARGE", f"payload of at least {walk.size} bytes exceeds {MAX_FRAME_BYTES} bytes")
    payload = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"), check_circular=False)
    data = payload.encode("utf-8")
    if len(data) > MAX_FRAME_BYTES:
        raise FrameError("FRAME_TOO_LARGE", f"payload of {len(data)} bytes exceeds {MAX_FRAME_BYTES} bytes")
    return data


def encode_payload(value: Any) -> bytes:
    """Encodes a value as compact UTF-8 JSON, refusing before producing anything.

    Accepts exactly dict (str keys), list, str, int, float, bool and None: tuples, subclasses
    and other types are ``FRAME_UNENCODABLE``, as are non-finite floats, integers beyond
    ±(2**53 - 1) and strings holding surrogates; over 128 levels is ``FRAME_TOO_DEEP``; a
    payload over 1 MiB is ``FRAME_TOO_LARGE``.
    """
    if _C_ENCODE is not None:
        try:
            data = _encode_fast(value)
        except (_Doubt, ValueError, TypeError, UnicodeEncodeError, RecursionError):
            data = None  # the exact walk decides, with the precise code and place
        if data is not None:
            return data
    return _encode_exactly(value)


def encode_payload_exactly(value: Any) -> bytes:
    """encode_payload without the fast path (tests compare the two)."""
    return _encode_exactly(value)


def encode_frame(value: Any) -> bytes:
    """Encodes a value as one whole frame: 4-byte big-endian payload length, then the payload."""
    data = encode_payload(value)
    return len(data).to_bytes(HEADER_BYTES, "big") + data
