"""The ``runtime`` object a cell uses to call back into the host.

Every call is one ``host_request`` stamped with the execution id of the cell that made it.
The stamp travels with asyncio's context: a task the cell spawns inherits its cell's scope, and
keeps it after the cell ended, when the scope has expired. Replies are matched by request id, so
concurrent calls (``asyncio.gather``) work and a late reply can never satisfy another request.

Local refusals (nothing is sent; the host would refuse anyway):

* the 129th request of one cell -> ``HostError("limit_exceeded")``;
* a request the wire schema refuses (bad parameters, too large) -> ``HostError("invalid_request")``;
* a request after the cell accepted a wait (``yielded``), after the cell ended (a background
  task outliving its cell), from a context with no cell (a thread), or from another event loop (a
  thread that copied the cell's context, e.g. ``asyncio.to_thread``) -> ``HostError("scope_expired")``.

Requests still pending when their cell ends fail with ``scope_expired``; their replies, should
they still arrive, are discarded.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
from typing import Any, Callable

__all__ = [
    "MAX_REQUESTS_PER_CELL",
    "METHODS",
    "ExecutionScope",
    "HostClient",
    "HostError",
    "Runtime",
    "WaitYield",
    "current_scope",
]

#: The host enforces the same bound; the worker refuses the 129th request without sending it.
MAX_REQUESTS_PER_CELL = 128


class HostError(Exception):
    """A host request failed: the host's error reply, or a local refusal with the same codes."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class WaitYield(BaseException):
    """Raised by an accepted ``runtime.wait``: the cell ends ``yielded``; catching it grants nothing."""

    def __init__(self, value: Any) -> None:
        super().__init__("the host accepted the wait; this cell has yielded")
        self.value = value


class ExecutionScope:
    """One foreground cell's authority: its id, request count, and whether it yielded or ended."""

    __slots__ = ("execution_id", "requests", "yielded", "ended", "on_yield")

    def __init__(self, execution_id: str) -> None:
        self.execution_id = execution_id
        self.requests = 0
        self.yielded = False
        self.ended = False
        #: Called when the host accepts a wait (the worker ends the cell even if a spawned task waited).
        self.on_yield: Callable[[], None] | None = None

    def __repr__(self) -> str:
        return (
            f"ExecutionScope({self.execution_id!r}, requests={self.requests}, "
            f"yielded={self.yielded}, ended={self.ended})"
        )


#: The scope of the cell whose code (or whose spawned task) is running; None outside any cell.
current_scope: contextvars.ContextVar[ExecutionScope | None] = contextvars.ContextVar(
    "klbr_execution_scope", default=None
)


def _plain(value: Any) -> Any:
    """Turn tuples into lists so natural Python arguments (``argv=("git", "status")``) encode."""
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class HostClient:
    """Sends host requests and matches replies by id; one per worker connection.

    ``encode(message) -> bytes`` builds the whole frame (so an unencodable argument raises in
    the calling cell, before anything is sent); ``send(frame)`` queues the bytes for the writer.
    """

    def __init__(
        self,
        encode: Callable[[dict], bytes],
        send: Callable[[bytes], None],
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self._encode = encode
        self._send = send
        #: The loop that writes the frames and delivers the replies (the worker sets it). A call
        #: on any other loop (a thread started with the cell's context, as ``asyncio.to_thread``
        #: does, running its own loop) is refused: its frame would be queued from a second thread
        #: and its reply set on a future of a loop that is never woken. None accepts any loop.
        self.loop = loop
        self._ids = itertools.count(1)
        self._pending: dict[str, tuple[ExecutionScope, asyncio.Future]] = {}

    @property
    def pending(self) -> int:
        """How many requests await a reply."""
        return len(self._pending)

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        """Send one request for the current scope and return the reply's value (or raise HostError)."""
        if not isinstance(method, str) or not method:
            raise HostError("invalid_request", f"method must be a non-empty string, got {method!r}")
        scope = current_scope.get()
        if scope is None:
            raise HostError("scope_expired", f"{method}: no cell execution in this context")
        if scope.yielded:
            raise HostError("scope_expired", f"{method}: execution {scope.execution_id} has yielded")
        if scope.ended:
            raise HostError("scope_expired", f"{method}: execution {scope.execution_id} has ended")
        if scope.requests >= MAX_REQUESTS_PER_CELL:
            raise HostError(
                "limit_exceeded",
                f"{method}: execution {scope.execution_id} already made {MAX_REQUESTS_PER_CELL} requests",
            )
        if self.loop is not None and asyncio.get_running_loop() is not self.loop:
            raise HostError("scope_expired", f"{method}: not on the worker's event loop (no cell scope there)")
        request_id = f"r{next(self._ids)}"
        request = {"method": method, **_plain(params)}
        try:
            frame = self._encode(
                {"kind": "host_request", "id": request_id, "execution_id": scope.execution_id, "request": request}
            )
        except Exception as error:  # EnvelopeError / FrameError: the request is not valid on the wire
            raise HostError("invalid_request", f"{method}: {error}") from None
        scope.requests += 1
        future = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (scope, future)
        try:
            self._send(frame)
            reply = await future
        finally:
            self._pending.pop(request_id, None)
        if reply.get("kind") == "error":
            raise HostError(reply.get("code", "internal"), reply.get("message", ""))
        value = reply.get("value")
        if method == "runtime.wait":
            scope.yielded = True
            if scope.on_yield is not None:
                scope.on_yield()
            raise WaitYield(value)
        return value

    def resolve(self, message: dict) -> bool:
        """Deliver a ``host_reply``; False (and nothing happens) when no such request is pending."""
        entry = self._pending.get(message.get("id"))
        if entry is None:
            return False
        scope, future = entry
        if scope.execution_id != message.get("execution_id") or future.done():
            return False
        future.set_result(message["reply"])
        return True

    def expire(self, scope: ExecutionScope) -> int:
        """End ``scope``: its pending requests fail with scope_expired; returns how many."""
        scope.ended = True
        count = 0
        for request_id, (owner, future) in list(self._pending.items()):
            if owner is scope:
                del self._pending[request_id]
                if not future.done():
                    future.set_exception(
                        HostError("scope_expired", f"execution {scope.execution_id} ended before the reply")
                    )
                    count += 1
        return count


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


#: Marks a required parameter in :data:`METHODS`.
_REQ = _Marker("required")
#: Marks an optional key: it defaults to None and is left out of the request when None.
_OMIT = _Marker("None")

#: Python name -> (wire method, ((param, default), ...)); ``_REQ`` = required, ``_OMIT`` = optional key.
METHODS: dict[str, tuple[str, tuple[tuple[str, Any], ...]]] = {
    "send": ("local.send", (("text", _REQ),)),
    "wait": ("runtime.wait", (("seconds", None), ("reason", ""))),
    "inspect": ("runtime.inspect", ()),
    "instructions": ("runtime.instructions", ()),
    "hooks_list": ("hooks.list", ()),
    "hooks_describe": ("hooks.describe", (("slot", _REQ),)),
    "skills_index": ("skills.index", ()),
    "skills_load": ("skills.load", (("id", _REQ),)),
    "workspace_info": ("workspace.info", ()),
    "run": (
        "workspace.run",
        (("argv", _REQ), ("cwd", _OMIT), ("env", _OMIT), ("timeout_ms", _OMIT), ("max_output_bytes", _OMIT)),
    ),
    "resolve": ("evidence.resolve", (("refs", _REQ),)),
    "activate": ("behavior.activate", (("path", _REQ), ("expected_epoch", _REQ))),
    "maintenance_originate": (
        "maintenance.originate",
        (("purpose", _REQ), ("reason", _REQ), ("evidence_refs", ())),
    ),
    "maintenance_assess": ("maintenance.assess", (("work_item_id", _REQ), ("outcome", _REQ))),
    "orientation_stage": (
        "orientation.stage",
        (("candidate_id", _REQ), ("text", _REQ), ("target", _REQ), ("scope", {"kind": "global"})),
    ),
    "orientation_current": ("orientation.current", (("scope", {"kind": "global"}),)),
    "orientation_adopt": ("orientation.adopt", (("candidate_id", _REQ), ("operation_id", _REQ))),
    "frontier_select": ("frontier.select", ()),
    "peer_open": ("peer.open", (("mode", _REQ), ("evidence", ()))),
    "peer_send": (
        "peer.send",
        (("peer_id", _REQ), ("request_id", _REQ), ("content", _REQ), ("evidence", ())),
    ),
    "peer_result": ("peer.result", (("request_id", _REQ), ("wait_ms", 0))),
    "peer_submit_result": ("peer.submit_result", (("request_id", _REQ), ("result", _REQ))),
    "peer_cancel": ("peer.cancel", (("request_id", _REQ),)),
    "peer_get": ("peer.get", (("peer_id", _REQ),)),
    "peer_list": ("peer.list", ()),
    "peer_stop": ("peer.stop", (("peer_id", _REQ), ("drain", True))),
    "remote_ensure": ("remote.ensure", (("target", _REQ),)),
    "remote_call": (
        "remote.call",
        (
            ("target", _REQ),
            ("namespace_id", _REQ),
            ("namespace_generation", _REQ),
            ("operation_id", _REQ),
            ("operation", _REQ),
            ("payload", _REQ),
        ),
    ),
    "remote_cancel": (
        "remote.cancel",
        (("namespace_id", _REQ), ("namespace_generation", _REQ), ("operation_id", _REQ)),
    ),
    "remote_close": ("remote.close", (("namespace_id", _REQ), ("namespace_generation", _REQ))),
}


def _make_method(name: str, wire: str, spec: tuple[tuple[str, Any], ...]) -> Callable:
    """Build ``async def name(self, p1, p2=default, ...)`` with a real signature for help()."""
    defaults = {f"_d{i}": default for i, (_p, default) in enumerate(spec) if default is not _REQ and default is not _OMIT}
    params = []
    for i, (pname, default) in enumerate(spec):
        if default is _REQ:
            params.append(pname)
        elif default is _OMIT:
            params.append(f"{pname}=None")
        else:
            params.append(f"{pname}=_d{i}")
    body = ["    params = {}"]
    for pname, default in spec:
        if default is _OMIT:
            body.append(f"    if {pname} is not None:\n        params[{pname!r}] = {pname}")
        else:
            body.append(f"    params[{pname!r}] = {pname}")
    source = (
        f"async def {name}(self{''.join(', ' + p for p in params)}):\n"
        + "\n".join(body)
        + f"\n    return await self._client.call({wire!r}, params)\n"
    )
    namespace: dict[str, Any] = dict(defaults)
    exec(compile(source, f"<klbr.runtime {name}>", "exec"), namespace)  # noqa: S102 - generated from METHODS
    method = namespace[name]
    method.__qualname__ = f"Runtime.{name}"
    method.__module__ = __name__
    method.__doc__ = f"Send the host request ``{wire}`` and return its reply value (raises HostError)."
    return method


class Runtime:
    """The host API bound as ``runtime`` in the cell namespace; every method is awaitable.

    ``await runtime.request(method, **params)`` sends any method; the named methods (``send``,
    ``wait``, ``run``, ``resolve``, ``activate``, ``peer_send``, ...) are listed in :data:`METHODS`.
    """

    def __init__(self, client: HostClient) -> None:
        self._client = client

    async def request(self, method: str, /, **params: Any) -> Any:
        """Send ``{"method": method, **params}`` as a host request and return the reply's value."""
        return await self._client.call(method, params)

    def __repr__(self) -> str:
        return f"<klbr runtime: {len(METHODS)} methods + request(method, **params)>"

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(METHODS))


for _name, (_wire, _spec) in METHODS.items():
    setattr(Runtime, _name, _make_method(_name, _wire, _spec))
del _name, _wire, _spec
