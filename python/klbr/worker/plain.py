"""The host's two hot messages read without the general decoder: ``execute`` and ``interrupt``.

The host (``@klbr/envelope``'s ``makeEnvelope`` and ``JSON.stringify``) writes every envelope
in one layout: no whitespace, the keys in the order ``version``, ``session_id``, ``generation``,
``message``, then ``kind``, ``id`` (and ``code``). A payload that is exactly that text, byte for
byte, for this connection's identity is certainly accepted by the strict decoder (C1: one
integer literal ``1``, no duplicate key, depth 2) and by the envelope schema, and decodes to the
message this module returns. Reading it is a prefix comparison, one search and (for ``execute``)
one call of the JSON string scanner, instead of the scanner with a Python hook per object and
per number, the bracket count and the schema walk: most of what reading a frame cost.

Anything else, valid or not (another key order, whitespace, an escape in an id, a lone
surrogate, a code over the plain size), gets None here and takes the general path, which also
reports the precise error. So what a frame means, and every error code, is exactly the general
path's: this only skips work for text whose outcome is known.
"""

from __future__ import annotations

import json.decoder
import re

from klbr.envelope import MAX_CELL_SOURCE_BYTES, PROTOCOL_VERSION, is_identifier

__all__ = ["PlainReader"]

#: The JSON string scanner the strict decoder uses (strict: raw control characters are refused).
_scanstring = json.decoder.scanstring
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_CODE_KEY = '","code":"'
_TAIL = "}}"


class PlainReader:
    """Reads the plain ``execute``/``interrupt`` payloads of one connection (see the module docstring)."""

    __slots__ = ("_execute", "_interrupt")

    def __init__(self, session_json: str, generation_json: str) -> None:
        """``session_json``/``generation_json``: the identity as the host's JSON writes it (quoted)."""
        envelope = (
            f'{{"version":{PROTOCOL_VERSION},"session_id":{session_json},'
            f'"generation":{generation_json},"message":{{"kind":"'
        )
        self._execute = envelope + 'execute","id":"'
        self._interrupt = envelope + 'interrupt","id":"'

    def interrupt_payload(self, operation_id: str) -> bytes:
        """The payload :meth:`read` reads as ``interrupt`` for ``operation_id`` (an identifier), byte for byte."""
        return f'{self._interrupt}{operation_id}"{_TAIL}'.encode()

    def read(self, payload: bytes) -> dict | None:
        """The message of ``payload`` (one frame's payload) when it is a plain one, else None."""
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError:
            return None
        head = self._execute
        if text.startswith(head):
            start = len(head)
            cut = text.find(_CODE_KEY, start)
            if cut < 0:
                return None
            operation_id = text[start:cut]
            if not is_identifier(operation_id):
                return None
            try:
                code, end = _scanstring(text, cut + len(_CODE_KEY))
            except ValueError:
                return None
            if end != len(text) - len(_TAIL) or not text.endswith(_TAIL):
                return None
            if len(code) * 4 > MAX_CELL_SOURCE_BYTES:
                return None  # the schema measures it in UTF-8 bytes
            if not code.isascii() and _LONE_SURROGATE.search(code) is not None:
                return None  # an escaped lone surrogate: FRAME_LONE_SURROGATE
            return {"kind": "execute", "id": operation_id, "code": code}
        head = self._interrupt
        if text.startswith(head) and text.endswith('"' + _TAIL):
            operation_id = text[len(head) : -len(_TAIL) - 1]
            if is_identifier(operation_id):
                return {"kind": "interrupt", "id": operation_id}
        return None
