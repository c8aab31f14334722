"""The hook SDK: typed requests and decisions for the two decision slots (C6).

A behaviour source's handlers take ``(request, context)`` and return one of the decision
dataclasses below, synchronously or from a coroutine. The worker turns the decision into its
wire form with :func:`decision_to_wire`; anything else is a failed invocation, never a crash.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Union

__all__ = [
    "ATTENTION_SOURCES",
    "SLOTS",
    "Allow",
    "AttentionDecision",
    "AttentionRequest",
    "Defer",
    "DeliveryDecision",
    "DeliveryRequest",
    "Hold",
    "HookContext",
    "Ignore",
    "Wake",
    "decision_to_wire",
    "request_from_wire",
]

#: The implemented decision slots, in the order the spec lists them.
SLOTS = ("attention.plan", "delivery.review")
#: Host-classified input sources an attention request may carry.
ATTENTION_SOURCES = ("operator", "discord.dm", "discord.mention", "discord.ambient")


@dataclass(frozen=True)
class AttentionRequest:
    """An input event the host asks the policy to plan attention for."""

    event_id: int
    source: str
    received_at_ms: int


@dataclass(frozen=True)
class DeliveryRequest:
    """A local send the host asks the policy to review before delivery."""

    effect_id: str
    destination: str
    text: str


@dataclass(frozen=True)
class HookContext:
    """What a handler may know about its invocation; it grants no host-effect scope."""

    slot: str
    revision: str
    operation_id: str


@dataclass(frozen=True)
class Wake:
    """Wake the agent for this input with a priority 0..100."""

    priority: int


@dataclass(frozen=True)
class Defer:
    """Look at this input again after 0 < seconds <= 600."""

    seconds: float


@dataclass(frozen=True)
class Ignore:
    """Do not wake for this input, and say why."""

    reason: str


@dataclass(frozen=True)
class Allow:
    """Deliver the message."""


@dataclass(frozen=True)
class Hold:
    """Hold the message; held is not approval and not proof of delivery."""

    reason: str


AttentionDecision = Union[Wake, Defer, Ignore]
DeliveryDecision = Union[Allow, Hold]


def request_from_wire(slot: str, data: dict[str, Any]) -> AttentionRequest | DeliveryRequest:
    """Build the typed request for ``slot`` from an already validated wire input."""
    if slot == "attention.plan":
        return AttentionRequest(data["event_id"], data["source"], data["received_at_ms"])
    if slot == "delivery.review":
        return DeliveryRequest(data["effect_id"], data["destination"], data["text"])
    raise ValueError(f"unknown slot {slot!r}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def decision_to_wire(slot: str, decision: Any) -> dict[str, Any]:
    """Serialize a handler's decision for ``slot``; raise TypeError/ValueError when it is not one."""
    if slot == "attention.plan":
        if isinstance(decision, Wake):
            if not _is_int(decision.priority) or not 0 <= decision.priority <= 100:
                raise ValueError(f"Wake.priority must be an int in 0..100, got {decision.priority!r}")
            return {"action": "wake", "priority": decision.priority}
        if isinstance(decision, Defer):
            seconds = decision.seconds
            if (
                isinstance(seconds, bool)
                or not isinstance(seconds, (int, float))
                or not math.isfinite(seconds)
                or not 0 < seconds <= 600
            ):
                raise ValueError(f"Defer.seconds must be a number in (0, 600], got {seconds!r}")
            return {"action": "defer", "seconds": seconds}
        if isinstance(decision, Ignore):
            if not isinstance(decision.reason, str):
                raise TypeError(f"Ignore.reason must be a str, got {type(decision.reason).__name__}")
            return {"action": "ignore", "reason": decision.reason}
        raise TypeError(f"attention.plan must return Wake, Defer or Ignore, got {type(decision).__name__}")
    if slot == "delivery.review":
        if isinstance(decision, Allow):
            return {"action": "allow"}
        if isinstance(decision, Hold):
            if not isinstance(decision.reason, str):
                raise TypeError(f"Hold.reason must be a str, got {type(decision.reason).__name__}")
            return {"action": "hold", "reason": decision.reason}
        raise TypeError(f"delivery.review must return Allow or Hold, got {type(decision).__name__}")
    raise ValueError(f"unknown slot {slot!r}")
