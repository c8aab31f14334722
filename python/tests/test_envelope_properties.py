"""Property tests for klbr.envelope (hypothesis): valid values survive; extra or missing keys fail."""

import copy
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from klbr.envelope import HOOK_SLOTS, EnvelopeError, parse_envelope, utf8_length

identifiers = st.text(alphabet=string.ascii_letters + string.digits + "_.-", min_size=1, max_size=128)
digests = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
texts = st.text(max_size=40)
safe_nat = st.integers(min_value=0, max_value=2**53 - 1)
seconds = st.floats(min_value=0, max_value=600, exclude_min=True, allow_nan=False)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.floats(allow_nan=False, allow_infinity=False) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
json_objects = st.dictionaries(texts, json_values, max_size=3)


def _fixed(**fields):
    return st.fixed_dictionaries({key: st.just(value) if not isinstance(value, st.SearchStrategy) else value for key, value in fields.items()})


scopes = _fixed(kind="global") | _fixed(kind="session", session_id=identifiers)

requests = st.one_of(
    _fixed(method="local.send", text=texts),
    _fixed(method="runtime.wait", seconds=st.none() | seconds, reason=texts),
    st.sampled_from(["hooks.list", "runtime.inspect", "runtime.instructions", "skills.index", "workspace.info", "frontier.select", "peer.list"]).map(
        lambda method: {"method": method}
    ),
    _fixed(method="hooks.describe", slot=st.sampled_from(HOOK_SLOTS)),
    st.fixed_dictionaries(
        {"method": st.just("workspace.run"), "argv": st.lists(texts, min_size=1, max_size=3)},
        optional={
            "cwd": texts,
            "env": st.dictionaries(texts, texts, max_size=3),
            "timeout_ms": st.integers(1, 3_600_000),
            "max_output_bytes": st.integers(1, 750_000),
        },
    ),
    _fixed(method="evidence.resolve", refs=st.lists(texts, min_size=1, max_size=64)),
    _fixed(method="behavior.activate", path=texts, expected_epoch=safe_nat),
    _fixed(method="maintenance.originate", purpose=st.text(min_size=1, max_size=40), reason=st.text(min_size=1, max_size=40), evidence_refs=st.lists(texts, max_size=3)),
    _fixed(method="maintenance.assess", work_item_id=identifiers, outcome=st.sampled_from(["no-change", "changed", "abandoned", "deferred"])),
    _fixed(method="orientation.stage", candidate_id=identifiers, text=st.text(min_size=1, max_size=40), target=identifiers, scope=scopes),
    _fixed(method="orientation.current", scope=scopes),
    _fixed(method=st.sampled_from(["peer.open", "agents.open"]), mode=texts, evidence=st.lists(json_values, max_size=3)),
    _fixed(method=st.sampled_from(["peer.send", "peer.message"]), peer_id=identifiers, request_id=identifiers, content=st.text(min_size=1, max_size=40), evidence=st.just([])),
    _fixed(method="peer.submit_result", request_id=identifiers, result=json_objects),
    _fixed(method="peer.stop", peer_id=identifiers, drain=st.booleans()),
    _fixed(
        method="remote.call",
        target=texts,
        namespace_id=identifiers,
        namespace_generation=identifiers,
        operation_id=identifiers,
        operation=texts,
        payload=json_objects,
    ),
)

hook_values = st.one_of(
    _fixed(action="wake", priority=st.integers(0, 100)),
    _fixed(action="defer", seconds=seconds),
    _fixed(action="ignore", reason=texts),
    _fixed(action="allow"),
    _fixed(action="hold", reason=texts),
)

messages = st.one_of(
    _fixed(kind="hello", token=st.text(min_size=1, max_size=60), role="workbench", revision=None, slots=st.just([]), skills=st.none() | digests),
    _fixed(
        kind="hello",
        token=st.text(min_size=1, max_size=60),
        role="hooks",
        revision=digests,
        slots=st.permutations(list(HOOK_SLOTS)),
        skills=st.none() | digests,
    ),
    _fixed(kind="execute", id=identifiers, code=texts),
    _fixed(
        kind="invoke",
        id=identifiers,
        slot="attention.plan",
        input=_fixed(
            event_id=st.integers(1, 2**53 - 1),
            source=st.sampled_from(["operator", "discord.dm", "discord.mention", "discord.ambient"]),
            received_at_ms=safe_nat,
        ),
    ),
    _fixed(kind="invoke", id=identifiers, slot="delivery.review", input=_fixed(effect_id=identifiers, destination="operator", text=texts)),
    _fixed(kind="host_request", id=identifiers, execution_id=identifiers, request=requests),
    _fixed(
        kind="host_reply",
        id=identifiers,
        execution_id=identifiers,
        reply=st.one_of(
            _fixed(kind="ok", value=json_values),
            _fixed(kind="error", code=st.from_regex(r"\A[a-z][a-z0-9_]{0,20}\Z"), message=texts),
        ),
    ),
    _fixed(
        kind="completed",
        id=identifiers,
        result=st.one_of(
            _fixed(
                kind="cell",
                status=st.sampled_from(["ok", "error", "yielded", "interrupted"]),
                output=st.lists(_fixed(stream=st.sampled_from(["stdout", "stderr", "result"]), text=texts), max_size=6),
                truncated_bytes=safe_nat,
                error=st.none() | texts,
            ),
            _fixed(kind="hook", value=hook_values),
            _fixed(kind="failed", error=texts),
        ),
    ),
    _fixed(kind="interrupt", id=identifiers),
    _fixed(kind="shutdown"),
)

envelopes = _fixed(version=1, session_id=identifiers, generation=identifiers, message=messages)


def _strict_paths(value):
    """Paths of the strict objects in a valid envelope (opaque payloads left out)."""
    paths = [(), ("message",)]
    message = value["message"]
    kind = message["kind"]
    if kind == "invoke":
        paths.append(("message", "input"))
    elif kind == "host_request":
        paths.append(("message", "request"))
        if "scope" in message["request"]:
            paths.append(("message", "request", "scope"))
    elif kind == "host_reply":
        paths.append(("message", "reply"))
    elif kind == "completed":
        paths.append(("message", "result"))
        result = message["result"]
        if result["kind"] == "hook":
            paths.append(("message", "result", "value"))
        if result["kind"] == "cell":
            paths.extend(("message", "result", "output", index) for index in range(len(result["output"])))
    return paths


def _at(value, path):
    for key in path:
        value = value[key]
    return value


def _outcome(value):
    try:
        parse_envelope(value)
        return "ok"
    except EnvelopeError as error:
        return (error.code, error.path)


@settings(max_examples=300, deadline=None)
@given(envelopes)
def test_any_valid_envelope_parses_to_an_equal_value(value):
    assert parse_envelope(value) == value


@settings(max_examples=300, deadline=None)
@given(envelopes, st.data())
def test_an_extra_key_on_any_strict_object_fails_at_that_key(value, data):
    path = data.draw(st.sampled_from(_strict_paths(value)))
    target = _at(value, path)
    key = data.draw(st.text(max_size=12).filter(lambda key: key not in target))
    mutated = copy.deepcopy(value)
    _at(mutated, path)[key] = data.draw(json_values)
    assert _outcome(mutated) == ("ENVELOPE_UNKNOWN_FIELD", ".".join(str(part) for part in (*path, key)))


@settings(max_examples=300, deadline=None)
@given(envelopes, st.data())
def test_removing_a_required_field_fails_as_missing_at_that_field(value, data):
    path = data.draw(st.sampled_from(_strict_paths(value)))
    optional = {"cwd", "env", "timeout_ms", "max_output_bytes"} if path[-1:] == ("request",) else set()
    keys = [key for key in _at(value, path) if key not in optional]
    if not keys:
        return
    key = data.draw(st.sampled_from(keys))
    mutated = copy.deepcopy(value)
    del _at(mutated, path)[key]
    assert _outcome(mutated) == ("ENVELOPE_MISSING_FIELD", ".".join(str(part) for part in (*path, key)))


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_value_parses_or_fails_with_an_envelope_error(value):
    outcome = _outcome(value)
    assert outcome == "ok" or outcome[0].startswith("ENVELOPE_")


def _bytes_per_code_point(char: str) -> int:
    # An independent count (utf8_length itself encodes): surrogates count 3, as in TypeScript.
    point = ord(char)
    return 1 if point < 0x80 else 2 if point < 0x800 else 3 if point < 0x10000 else 4


@given(st.text(st.characters(exclude_categories=()), max_size=50) | st.text("a\u00e9\u20ac\ud800\udfff\U0001f600", max_size=50))
def test_utf8_length_counts_encoded_bytes(text):
    assert utf8_length(text) == sum(_bytes_per_code_point(char) for char in text)
