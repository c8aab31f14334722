"""The runtime API against an in-process fake host over a socketpair (real frames and envelopes)."""

from __future__ import annotations

import asyncio
import contextvars
import socket

import pytest

from klbr.envelope import make_envelope, parse_envelope, parse_host_request
from klbr.frame import FrameDecoder, encode_frame, read_frame
from klbr.runtime import (
    MAX_REQUESTS_PER_CELL,
    METHODS,
    ExecutionScope,
    HostClient,
    HostError,
    Runtime,
    WaitYield,
    current_scope,
)

SESSION, GENERATION = "s", "g"


class InProcessHost:
    """Reads the worker's frames from one end of a socketpair; replies through the client."""

    def __init__(self) -> None:
        self.worker_end, self.host_end = socket.socketpair()
        self.worker_end.setblocking(False)
        self.client = HostClient(
            lambda message: encode_frame(make_envelope(SESSION, GENERATION, message)),
            self.worker_end.send,
        )
        self.runtime = Runtime(self.client)
        self.received: list[dict] = []
        self.reader: asyncio.StreamReader | None = None

    async def start(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(sock=self.host_end)

    async def next_request(self) -> dict:
        value = await asyncio.wait_for(read_frame(self.reader), 5)
        message = parse_envelope(value, SESSION, GENERATION)["message"]
        assert message["kind"] == "host_request"
        self.received.append(message)
        return message

    def reply(self, request: dict, reply: dict) -> bool:
        frame = encode_frame(
            make_envelope(
                SESSION,
                GENERATION,
                {"kind": "host_reply", "id": request["id"], "execution_id": request["execution_id"], "reply": reply},
            )
        )
        (value,) = FrameDecoder().feed(frame)
        return self.client.resolve(parse_envelope(value)["message"])

    def close(self) -> None:
        self.writer.close()
        self.worker_end.close()


def run_in_cell(body, scope: ExecutionScope | None = None):
    """Run ``body(host)`` in a task whose context carries ``scope`` (a fresh cell by default)."""

    async def main():
        host = InProcessHost()
        await host.start()
        cell_scope = scope or ExecutionScope("exec-1")
        context = contextvars.copy_context()
        context.run(current_scope.set, cell_scope)
        try:
            return await asyncio.get_running_loop().create_task(body(host, cell_scope), context=context)
        finally:
            host.close()

    return asyncio.run(main())


def ok(value):
    return {"kind": "ok", "value": value}


def test_a_request_is_a_host_request_stamped_with_the_execution():
    async def body(host, scope):
        call = asyncio.create_task(host.runtime.send("hello"))
        request = await host.next_request()
        assert request["execution_id"] == "exec-1"
        assert request["request"] == {"method": "local.send", "text": "hello"}
        assert host.reply(request, ok({"effect_id": "e1", "status": "confirmed", "event_id": "1", "reason": None}))
        return await call

    assert run_in_cell(body)["status"] == "confirmed"


def test_concurrent_requests_are_matched_by_id_not_order():
    async def body(host, scope):
        calls = asyncio.gather(*(host.runtime.request("evidence.resolve", refs=[f"event:{i}"]) for i in range(5)))
        requests = [await host.next_request() for _ in range(5)]
        assert len({r["id"] for r in requests}) == 5
        for request in reversed(requests):
            host.reply(request, ok(request["request"]["refs"][0]))
        return await calls

    assert run_in_cell(body) == [f"event:{i}" for i in range(5)]


def test_an_error_reply_raises_host_error_with_code_and_message():
    async def body(host, scope):
        call = asyncio.create_task(host.runtime.skills_load("nope"))
        request = await host.next_request()
        host.reply(request, {"kind": "error", "code": "not_found", "message": "no skill 'nope'"})
        with pytest.raises(HostError) as caught:
            await call
        return caught.value

    error = run_in_cell(body)
    assert error.code == "not_found" and error.message == "no skill 'nope'"


def test_the_129th_request_is_refused_without_being_sent():
    async def body(host, scope):
        async def one(i):
            call = asyncio.create_task(host.runtime.inspect())
            request = await host.next_request()
            host.reply(request, ok(i))
            return await call

        for i in range(MAX_REQUESTS_PER_CELL):
            assert await one(i) == i
        with pytest.raises(HostError) as caught:
            await host.runtime.inspect()
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(host.next_request(), 0.2)  # nothing more was written
        return caught.value, len(host.received)

    error, sent = run_in_cell(body)
    assert error.code == "limit_exceeded"
    assert sent == MAX_REQUESTS_PER_CELL == 128


def test_an_accepted_wait_yields_and_refuses_later_requests_locally():
    async def body(host, scope):
        after = []

        async def cell():
            await host.runtime.wait(30, reason="waiting for input")
            after.append("ran")

        task = asyncio.create_task(cell())
        request = await host.next_request()
        assert request["request"] == {"method": "runtime.wait", "seconds": 30, "reason": "waiting for input"}
        host.reply(request, ok({"wait_id": "w1", "deadline_ms": 123, "pending_input": False}))
        with pytest.raises(WaitYield) as caught:
            await task
        assert caught.value.value["wait_id"] == "w1"
        assert after == [] and scope.yielded
        # Catching the sentinel grants nothing: the next request is refused here.
        with pytest.raises(HostError) as refused:
            await host.runtime.send("still here?")
        return refused.value, len(host.received)

    refused, sent = run_in_cell(body)
    assert refused.code == "scope_expired"
    assert sent == 1


def test_a_refused_wait_does_not_yield():
    async def body(host, scope):
        call = asyncio.create_task(host.runtime.wait(None))
        request = await host.next_request()
        assert request["request"]["seconds"] is None and request["request"]["reason"] == ""
        host.reply(request, {"kind": "error", "code": "invalid_request", "message": "no"})
        with pytest.raises(HostError):
            await call
        return scope.yielded

    assert run_in_cell(body) is False


def test_ending_the_scope_fails_pending_requests_and_discards_late_replies():
    async def body(host, scope):
        call = asyncio.create_task(host.runtime.inspect())
        request = await host.next_request()
        assert host.client.expire(scope) == 1
        with pytest.raises(HostError) as caught:
            await call
        late = host.reply(request, ok("late"))
        with pytest.raises(HostError) as after:
            await host.runtime.inspect()  # a background task outliving its cell
        return caught.value.code, late, after.value.code, host.client.pending

    assert run_in_cell(body) == ("scope_expired", False, "scope_expired", 0)


def test_a_reply_for_another_execution_does_not_satisfy_a_request():
    async def body(host, scope):
        call = asyncio.create_task(host.runtime.inspect())
        request = await host.next_request()
        forged = dict(request, execution_id="exec-other")
        assert host.reply(forged, ok("wrong")) is False
        assert host.reply(request, ok("right")) is True
        return await call

    assert run_in_cell(body) == "right"


def test_cancelling_a_call_forgets_it():
    async def body(host, scope):
        call = asyncio.create_task(host.runtime.inspect())
        request = await host.next_request()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        return host.reply(request, ok("late")), host.client.pending

    assert run_in_cell(body) == (False, 0)


def test_no_cell_in_context_is_refused():
    async def main():
        host = InProcessHost()
        await host.start()
        try:
            with pytest.raises(HostError) as caught:
                await host.runtime.inspect()
            return caught.value.code
        finally:
            host.close()

    assert asyncio.run(main()) == "scope_expired"


def test_a_call_from_another_event_loop_is_refused_without_being_sent():
    async def body(host, scope):
        host.client.loop = asyncio.get_running_loop()

        def in_thread():  # asyncio.to_thread copies the context: the thread sees the cell's scope
            async def ask():
                return await asyncio.wait_for(host.runtime.inspect(), 2)

            try:
                asyncio.run(ask())
            except HostError as error:
                return error.code
            return "answered"

        return await asyncio.to_thread(in_thread), scope.requests, host.client.pending

    assert run_in_cell(body) == ("scope_expired", 0, 0)


def test_invalid_parameters_are_refused_locally_and_not_counted():
    async def body(host, scope):
        with pytest.raises(HostError) as caught:
            await host.runtime.wait(601)
        with pytest.raises(HostError):
            await host.runtime.request("no.such_method")
        with pytest.raises(HostError):
            await host.runtime.send(float("nan"))  # type: ignore[arg-type]
        return caught.value.code, scope.requests, len(host.received)

    assert run_in_cell(body) == ("invalid_request", 0, 0)


def test_run_omits_unset_optional_parameters_and_accepts_tuples():
    async def body(host, scope):
        call = asyncio.create_task(host.runtime.run(("git", "status"), timeout_ms=5000))
        request = await host.next_request()
        host.reply(request, ok(None))
        await call
        return request["request"]

    assert run_in_cell(body) == {"method": "workspace.run", "argv": ["git", "status"], "timeout_ms": 5000}


EXAMPLES = {
    "send": (("hi",), {}),
    "wait": ((), {"seconds": 5, "reason": "r"}),
    "inspect": ((), {}),
    "instructions": ((), {}),
    "hooks_list": ((), {}),
    "hooks_describe": (("delivery.review",), {}),
    "skills_index": ((), {}),
    "skills_load": (("workspace",), {}),
    "workspace_info": ((), {}),
    "run": ((["cargo", "check"],), {"cwd": ".", "env": {}, "timeout_ms": 120000, "max_output_bytes": 750000}),
    "resolve": ((["event:42"],), {}),
    "activate": (("/abs/releases/x", 3), {}),
    "maintenance_originate": (("p", "r"), {}),
    "maintenance_assess": (("w", "no-change"), {}),
    "orientation_stage": (("c", "text", "target"), {}),
    "orientation_current": ((), {}),
    "orientation_adopt": (("c", "op-1"), {}),
    "frontier_select": ((), {}),
    "peer_open": (("independent",), {}),
    "peer_send": (("p", "req-1", "content"), {}),
    "peer_result": (("req-1",), {}),
    "peer_submit_result": (("req-1", {}), {}),
    "peer_cancel": (("req-1",), {}),
    "peer_get": (("p",), {}),
    "peer_list": ((), {}),
    "peer_stop": (("p",), {}),
    "remote_ensure": (("build-host",), {}),
    "remote_call": (("build-host", "n", "g", "op", "execute", {}), {}),
    "remote_cancel": (("n", "g", "op"), {}),
    "remote_close": (("n", "g"), {}),
}


def test_every_named_method_is_covered_by_an_example():
    assert set(EXAMPLES) == set(METHODS)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_named_method_sends_a_valid_wire_request(name):
    args, kwargs = EXAMPLES[name]

    async def body(host, scope):
        call = asyncio.create_task(getattr(host.runtime, name)(*args, **kwargs))
        request = await host.next_request()
        host.reply(request, ok(None))
        try:
            await call
        except WaitYield:
            pass
        return request["request"]

    request = run_in_cell(body)
    assert request["method"] == METHODS[name][0]
    assert parse_host_request(request) == request


# Each bounded parameter at its limit (sent) and one past it (refused here, nothing written).
EDGES = [
    ("runtime.wait seconds", "wait", {"seconds": 600}, {"seconds": 600.001}),
    ("peer.result wait_ms", "peer_result", {"request_id": "r", "wait_ms": 600_000}, {"request_id": "r", "wait_ms": 600_001}),
    ("local.send text", "send", {"text": "x" * 65_536}, {"text": "x" * 65_537}),
    ("peer.send content", "peer_send", {"peer_id": "p", "request_id": "r", "content": "\u00e9" * 32_768}, {"peer_id": "p", "request_id": "r", "content": "\u00e9" * 32_768 + "x"}),
    ("maintenance purpose", "maintenance_originate", {"purpose": "x" * 4096, "reason": "r"}, {"purpose": "x" * 4097, "reason": "r"}),
    ("maintenance reason", "maintenance_originate", {"purpose": "p", "reason": "x" * 4096}, {"purpose": "p", "reason": "x" * 4097}),
    ("orientation text", "orientation_stage", {"candidate_id": "c", "text": "x" * 65_536, "target": "t"}, {"candidate_id": "c", "text": "x" * 65_537, "target": "t"}),
    ("evidence refs", "resolve", {"refs": [f"event:{i}" for i in range(1, 65)]}, {"refs": [f"event:{i}" for i in range(1, 66)]}),
    ("run timeout_ms", "run", {"argv": ["ls"], "timeout_ms": 3_600_000}, {"argv": ["ls"], "timeout_ms": 3_600_001}),
    ("run max_output_bytes", "run", {"argv": ["ls"], "max_output_bytes": 750_000}, {"argv": ["ls"], "max_output_bytes": 750_001}),
    ("identifier", "peer_get", {"peer_id": "p" * 128}, {"peer_id": "p" * 129}),
]


@pytest.mark.parametrize("name, method, at, past", EDGES, ids=[e[0] for e in EDGES])
def test_a_bounded_parameter_is_sent_at_its_limit_and_refused_one_past_it(name, method, at, past):
    async def body(host, scope):
        call = asyncio.create_task(getattr(host.runtime, method)(**at))
        request = await host.next_request()
        # An error reply, so no case (the wait included) changes the cell's scope.
        host.reply(request, {"kind": "error", "code": "unavailable", "message": "edge test"})
        with pytest.raises(HostError) as answered:
            await call
        with pytest.raises(HostError) as refused:
            await getattr(host.runtime, method)(**past)
        return request["request"], answered.value.code, refused.value, len(host.received), scope.requests

    sent, answered, refused, written, counted = run_in_cell(body)
    assert {k: sent[k] for k in at} == at, f"{name}: the request at the limit was not sent as given"
    assert answered == "unavailable"
    assert refused.code == "invalid_request", f"{name}: one past the limit was not refused locally: {refused}"
    assert written == 1 and counted == 1, f"{name}: one past the limit was written or counted"

