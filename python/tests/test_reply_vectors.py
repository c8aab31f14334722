"""fixtures/replies/maintenance-orientation.json: the C11 reply shapes, as klbr.envelope checks them
and as the runtime API returns them to a cell (the same cases the vitest suite runs)."""

import asyncio

import pytest

from conftest import load_vectors, same_value
from klbr.envelope import EnvelopeError, parse_reply_value
from test_runtime import ok, run_in_cell

CASES = load_vectors("replies/maintenance-orientation.json")

#: One call per method, as a cell makes it.
CALLS = {
    "maintenance.originate": lambda rt: rt.maintenance_originate("p", "r", ["event:1"]),
    "maintenance.assess": lambda rt: rt.maintenance_assess("wi-1", "changed"),
    "orientation.stage": lambda rt: rt.orientation_stage("c-1", "t", "style"),
    "orientation.current": lambda rt: rt.orientation_current(),
    "orientation.adopt": lambda rt: rt.orientation_adopt("c-1", "op-1"),
}


def test_every_method_has_valid_and_invalid_cases():
    for method in CALLS:
        assert any(case["input"]["method"] == method and "expected" in case for case in CASES), method
        assert any(case["input"]["method"] == method and "error" in case for case in CASES), method


@pytest.mark.parametrize("case", CASES, ids=[case["description"] for case in CASES])
def test_vector(case):
    method, value = case["input"]["method"], case["input"]["value"]
    if "error" in case:
        with pytest.raises(EnvelopeError) as caught:
            parse_reply_value(method, value)
        assert {"code": caught.value.code, "path": caught.value.path} == case["error"]
    else:
        assert same_value(parse_reply_value(method, value), case["expected"])


@pytest.mark.parametrize("case", [c for c in CASES if "expected" in c], ids=[c["description"] for c in CASES if "expected" in c])
def test_the_runtime_returns_the_reply_value_unchanged(case):
    method, value = case["input"]["method"], case["input"]["value"]

    async def body(host, scope):
        call = asyncio.create_task(CALLS[method](host.runtime))
        request = await host.next_request()
        assert request["request"]["method"] == method
        assert host.reply(request, ok(value))
        return await call

    returned = run_in_cell(body)
    assert same_value(returned, case["expected"])
    assert same_value(parse_reply_value(method, returned), case["expected"])


def test_a_method_without_a_pinned_shape_is_refused():
    with pytest.raises(ValueError):
        parse_reply_value("local.send", {})
