"""The worker connection's completion encoder and outbox, without a process."""

from __future__ import annotations

import socket

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from klbr.envelope import EnvelopeError
from klbr.frame import FrameError
from klbr.worker.connection import Connection

_texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40) | st.sampled_from(
    ["", "\x00\x1f\"\\", "\u2028\u2029", "\U0001f600", "é" * 20]
)
_records = st.lists(
    st.fixed_dictionaries({"stream": st.sampled_from(["stdout", "stderr", "result"]), "text": _texts}), max_size=6
)


@pytest.fixture
def pair():
    a, b = socket.socketpair()
    yield Connection(a, "s-1", "g-1"), b
    a.close()
    b.close()


def _slow(conn: Connection, op_id, status, output, truncated, error) -> bytes:
    result = {"kind": "cell", "status": status, "output": output, "truncated_bytes": truncated, "error": error}
    return conn.encode({"kind": "completed", "id": op_id, "result": result})


@settings(max_examples=300, deadline=None)
@given(
    op_id=st.from_regex(r"[A-Za-z0-9_.\-]{1,20}", fullmatch=True),
    status=st.sampled_from(["ok", "error", "yielded", "interrupted"]),
    output=_records,
    truncated=st.integers(0, 2**53 - 1),
    error=st.none() | _texts,
)
def test_the_cell_completion_frame_is_the_codecs_frame(op_id, status, output, truncated, error):
    conn = Connection(socket.socket(socket.AF_UNIX), "s-1", "g-1")
    try:
        assert conn.encode_cell_completion(op_id, status, output, truncated, error) == _slow(
            conn, op_id, status, output, truncated, error
        )
    finally:
        conn.sock.close()


def _same_failure(conn: Connection, *args) -> None:
    with pytest.raises((EnvelopeError, FrameError)) as slow:
        _slow(conn, *args)
    with pytest.raises((EnvelopeError, FrameError)) as fast:
        conn.encode_cell_completion(*args)
    assert type(fast.value) is type(slow.value)
    assert fast.value.code == slow.value.code
    assert str(fast.value) == str(slow.value)


def test_what_the_schema_refuses_fails_exactly_as_the_codec_fails(pair):
    conn, _ = pair
    ok = [{"stream": "stdout", "text": "x"}]
    _same_failure(conn, "bad id!", "ok", ok, 0, None)
    _same_failure(conn, "c-1", "done", ok, 0, None)
    _same_failure(conn, "c-1", "ok", [{"stream": "stdin", "text": "x"}], 0, None)
    _same_failure(conn, "c-1", "ok", [{"stream": "stdout", "text": "x", "extra": 1}], 0, None)
    _same_failure(conn, "c-1", "ok", [{"stream": "stdout", "text": "\ud800"}], 0, None)
    _same_failure(conn, "c-1", "ok", [{"stream": "stdout", "text": "x" * 65_537}], 0, None)
    _same_failure(conn, "c-1", "ok", [{"stream": "stdout", "text": "é" * 32_769}], 0, None)
    _same_failure(conn, "c-1", "ok", [{"stream": "stdout", "text": "x"}] * 257, 0, None)
    _same_failure(conn, "c-1", "ok", ok, -1, None)
    _same_failure(conn, "c-1", "ok", ok, 2**53, None)
    _same_failure(conn, "c-1", "ok", ok, True, None)
    _same_failure(conn, "c-1", "error", ok, 0, "e" * 65_537)
    _same_failure(conn, "c-1", "error", ok, 0, "\udfff")


def test_a_bad_session_on_the_command_line_fails_exactly_as_the_codec_fails():
    conn = Connection(socket.socket(socket.AF_UNIX), "bad session", "g-1")
    try:
        _same_failure(conn, "c-1", "ok", [], 0, None)
    finally:
        conn.sock.close()


def test_the_largest_cell_completion_fits_a_frame(pair):
    conn, _ = pair
    # Every output byte and every error byte escaped as \\u00XX: the frame stays under 1 MiB.
    output = [{"stream": "stdout", "text": "\x01" * 65_536}]
    frame = conn.encode_cell_completion("c-1", "error", output, 0, "\x02" * 65_536)
    assert frame == _slow(conn, "c-1", "error", output, 0, "\x02" * 65_536)


def test_send_direct_writes_queued_frames_first_in_one_go(pair):
    import asyncio

    conn, peer = pair
    loop = asyncio.new_event_loop()
    try:
        conn._loop = loop  # what start() sets; no reader thread is needed here
        conn.send(b"one")
        conn.send(b"two")
        conn.send_direct(b"three")
        assert peer.recv(100) == b"onetwothree"
        conn.send(b"four")
        loop.call_soon(loop.stop)
        loop.run_forever()  # the flush queued by the first send finds the outbox written already
        assert peer.recv(100) == b"four"
        conn.closed = True
        conn.send_direct(b"never")
        conn.send(b"never")
        peer.setblocking(False)
        with pytest.raises(BlockingIOError):
            peer.recv(100)
    finally:
        loop.close()


def _mostly(valid, *others):
    """``valid`` most of the time, else one of ``others``: each envelope breaks few rules at once."""
    return st.one_of(st.just(valid), st.just(valid), st.just(valid), st.sampled_from(others))


_ids = _mostly("c-1", "a" * 128, "a" * 129, "", "bad id", "é", 5, None, True)
_codes = _mostly("1+1", "", "\ud800", "x" * 65_536, "x" * 65_537, "é" * 87_382, 7, None)
_versions = _mostly(1, 1.0, True, 2, "1", None)


@st.composite
def _envelopes(draw):
    kind = draw(st.sampled_from(["execute", "interrupt"]) | st.sampled_from(["shutdown", "host_reply", "Execute", 1, None]))
    message = {"kind": kind, "id": draw(_ids)}
    if kind != "interrupt" or draw(st.integers(0, 4)) == 0:
        message["code"] = draw(_codes)
    if draw(st.integers(0, 5)) == 0:
        message["extra"] = 1
    if draw(st.integers(0, 5)) == 0:
        del message["id"]
    value = {
        "version": draw(_versions),
        "session_id": draw(_mostly("s-1", "s-2")),
        "generation": draw(_mostly("g-1", "g-2")),
        "message": draw(_mostly(message, [], "m", None)),
    }
    if draw(st.integers(0, 5)) == 0:
        value["extra"] = 1
    if draw(st.integers(0, 5)) == 0:
        del value["version"]
    return value


@settings(max_examples=500, deadline=None)
@given(value=_envelopes())
def test_the_plain_message_shortcut_is_the_schemas_message_or_nothing(value):
    from klbr.envelope import parse_envelope
    from klbr.worker.connection import _plain_message

    got = _plain_message(value, "s-1", "g-1")
    if got is None:
        return  # the schema's path decides (and reports any error itself)
    assert got == parse_envelope(value, "s-1", "g-1")["message"]


def test_the_plain_message_shortcut_takes_the_common_messages():
    from klbr.worker.connection import _plain_message

    envelope = {"version": 1, "session_id": "s-1", "generation": "g-1"}
    execute = {"kind": "execute", "id": "c-1", "code": "1+1"}
    interrupt = {"kind": "interrupt", "id": "c-1"}
    assert _plain_message({**envelope, "message": execute}, "s-1", "g-1") is execute
    assert _plain_message({**envelope, "message": interrupt}, "s-1", "g-1") is interrupt
    assert _plain_message({**envelope, "message": {"kind": "shutdown"}}, "s-1", "g-1") is None


def test_messages_read_by_the_reader_thread_and_by_the_loop_reach_the_worker_in_order():
    import threading
    import time

    from klbr.frame import encode_frame
    from klbr.worker.loop import new_worker_loop

    a, b = socket.socketpair()
    conn = Connection(a, "s-1", "g-1")
    loop = new_worker_loop()
    got: list[str] = []
    readers: list[bool] = []  # per message: read on the loop's thread?
    main = threading.get_ident()

    def frames(ids) -> bytes:
        return b"".join(
            encode_frame({"version": 1, "session_id": "s-1", "generation": "g-1", "message": {"kind": "interrupt", "id": f"c-{i}"}})
            for i in ids
        )

    def until(predicate) -> None:
        deadline = time.monotonic() + 20
        while not predicate():
            assert time.monotonic() < deadline, (got, readers)
            time.sleep(0.001)

    def host() -> None:
        until(lambda: len(got) == 5)  # the loop drained what the thread read
        until(lambda: not conn._watching)  # the loop blocks in its select: it reads the rest itself
        b.sendall(frames(range(5, 10)))
        until(lambda: len(got) == 10)
        b.close()

    def busy() -> None:
        # The loop is busy: only the reader thread can read these, and queues them for later.
        b.sendall(frames(range(5)))
        until(lambda: len(readers) == 5)
        assert got == []
        threading.Thread(target=host, daemon=True).start()

    conn.start(loop, lambda message: got.append(message["id"]), lambda end: loop.stop(),
               lambda message: readers.append(threading.get_ident() == main))
    loop.call_soon(busy)
    loop.call_later(30, loop.stop)
    try:
        loop.run_forever()
    finally:
        conn.close()
        loop.close()
    assert got == [f"c-{i}" for i in range(10)]
    assert readers[:5] == [False] * 5
    assert readers[5:] == [True] * 6  # the idle loop read the rest (and the end) itself, no thread in between
