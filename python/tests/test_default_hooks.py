"""The default behaviour source python/klbr_hooks: its manifest and handlers."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.dont_write_bytecode = True  # klbr_hooks is digested: it must never grow a __pycache__

from klbr.manifest import read_manifest  # noqa: E402
from klbr.sdk import (  # noqa: E402
    Allow,
    AttentionRequest,
    DeliveryRequest,
    Hold,
    HookContext,
    Ignore,
    Wake,
    decision_to_wire,
)
from klbr_hooks import defaults  # noqa: E402

ROOT = Path(__file__).resolve().parents[1] / "klbr_hooks"
CTX = HookContext(slot="delivery.review", revision="0" * 64, operation_id="op-1")
CREDENTIAL = "message looks like it contains a credential: "


def attend(source: str):
    return defaults.attention(AttentionRequest(event_id=1, source=source, received_at_ms=0), CTX)


def review(text: str):
    return defaults.delivery(DeliveryRequest(effect_id="e-1", destination="operator", text=text), CTX)


def test_manifest_names_the_default_handlers():
    manifest = read_manifest(ROOT)
    assert manifest.hooks == {
        "attention.plan": "klbr_hooks.defaults:attention",
        "delivery.review": "klbr_hooks.defaults:delivery",
    }
    assert manifest.package == "klbr_hooks"
    for slot in ("attention.plan", "delivery.review"):
        module, attribute = manifest.entrypoint(slot)
        assert callable(getattr(importlib.import_module(module), attribute))


@pytest.mark.parametrize(
    ("source", "decision"),
    [
        ("operator", Wake(100)),
        ("discord.dm", Wake(60)),
        ("discord.mention", Wake(40)),
        ("discord.ambient", Ignore("ambient chatter is not addressed to the agent")),
    ],
)
def test_attention_per_source(source, decision):
    result = attend(source)
    assert result == decision
    decision_to_wire("attention.plan", result)  # a valid wire decision


def test_attention_ignores_an_unknown_source_and_names_it():
    result = attend("carrier.pigeon")
    assert isinstance(result, Ignore) and "carrier.pigeon" in result.reason


@pytest.mark.parametrize("text", ["", " ", "\n\t  \r\n", "\u3000\u00a0"])
def test_empty_or_whitespace_is_held(text):
    assert review(text) == Hold("empty message")


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow...\n-----END RSA PRIVATE KEY-----", "private key"),
        ("here: -----BEGIN PRIVATE KEY-----\nabc", "private key"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----", "private key"),
        ("-----BEGIN EC PRIVATE KEY-----", "private key"),
        ("-----BEGIN ENCRYPTED PRIVATE KEY-----", "private key"),
        ("-----BEGIN PGP PRIVATE KEY BLOCK-----", "private key"),
        ("aws key AKIAIOSFODNN7EXAMPLE in the config", "AWS access key"),
        ("AKIAIOSFODNN7EXAMPLE", "AWS access key"),
        ("temporary ASIAIOSFODNN7EXAMPLE", "AWS access key"),
        ("OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwx", "API key"),
        ("use sk-proj-AbCdEf0123456789_-xyzXYZ please", "API key"),
        ("token ghp_0123456789abcdefghijABCDEFGHIJ012345", "GitHub token"),
        ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "GitHub token"),
    ],
)
def test_credentials_are_held_with_their_kind(text, kind):
    result = review(text)
    assert result == Hold(CREDENTIAL + kind)


def test_the_reason_never_repeats_the_secret():
    secret = "sk-abcdefghijklmnopqrstuvwx"
    result = review(f"my key is {secret}")
    assert isinstance(result, Hold) and secret not in result.reason


@pytest.mark.parametrize(
    "text",
    [
        "hello, the build is green",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjAN\n-----END PUBLIC KEY-----",
        "-----BEGIN CERTIFICATE-----",
        "AKIA1234",  # too short for an access key id
        "XAKIAIOSFODNN7EXAMPLEX",  # embedded in a longer token
        "sk-short",  # fewer than 20 characters after sk-
        "the task-abcdefghijklmnopqrstuvwxyz is done",  # 'sk-' inside a word
        "ghp_short",
        "see https://github.com/org/repo/pull/12",
    ],
)
def test_ordinary_text_is_allowed(text):
    assert review(text) == Allow()


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_delivery_always_returns_a_valid_decision(text):
    result = review(text)
    wire = decision_to_wire("delivery.review", result)
    if not text.strip():
        assert wire == {"action": "hold", "reason": "empty message"}


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz ,.!?", min_size=1, max_size=120).filter(lambda t: t.strip()))
def test_plain_prose_is_allowed(text):
    assert review(text) == Allow()
