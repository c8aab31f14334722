"""Default handlers for the two decision slots.

attention.plan wakes the agent for the operator and for Discord messages addressed to it, most
urgent first, and ignores ambient chatter. delivery.review holds a message that is empty or that
looks like it carries a credential, and allows everything else. The hold reason names the kind of
credential, never the matched text, so the reason itself can be logged safely.
"""

from __future__ import annotations

import re

from klbr.sdk import (
    Allow,
    AttentionRequest,
    DeliveryRequest,
    Hold,
    HookContext,
    Ignore,
    Wake,
)

__all__ = ["CREDENTIAL_PATTERNS", "WAKE_PRIORITIES", "attention", "delivery", "find_credential"]

#: Wake priority per input source; a source not listed here is ignored.
WAKE_PRIORITIES = {
    "operator": 100,
    "discord.dm": 60,
    "discord.mention": 40,
}

_AMBIENT_REASON = "ambient chatter is not addressed to the agent"

#: (kind, pattern) pairs, checked in order; the first that matches names the hold reason.
CREDENTIAL_PATTERNS = (
    ("private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("AWS access key", re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])")),
    ("API key", re.compile(r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}")),
    ("GitHub token", re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
)


def find_credential(text: str) -> str | None:
    """The kind of the first credential-looking string in ``text``, or None."""
    for kind, pattern in CREDENTIAL_PATTERNS:
        if pattern.search(text) is not None:
            return kind
    return None


def attention(request: AttentionRequest, context: HookContext) -> Wake | Ignore:
    """Wake for the operator (100), a DM (60) or a mention (40); ignore ambient chatter."""
    priority = WAKE_PRIORITIES.get(request.source)
    if priority is not None:
        return Wake(priority)
    if request.source == "discord.ambient":
        return Ignore(_AMBIENT_REASON)
    return Ignore(f"unknown input source {request.source!r}")


def delivery(request: DeliveryRequest, context: HookContext) -> Allow | Hold:
    """Hold empty messages and messages that look like they carry a credential; allow the rest."""
    if not request.text.strip():
        return Hold("empty message")
    kind = find_credential(request.text)
    if kind is not None:
        return Hold(f"message looks like it contains a credential: {kind}")
    return Allow()
