"""The doorbell (O_ASYNC on the worker's socket, its owner switched) and the interrupt it looks for, without a worker process."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import struct
import sys

import pytest

from klbr.worker.connection import Connection
from klbr.worker.doorbell import DOORBELL_SIGNAL, Doorbell
from klbr.worker.plain import PlainReader

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="O_ASYNC with F_SETOWN_EX is Linux's")


def _frame(message: dict, session: str = "s-1", generation: str = "g-1") -> bytes:
    payload = json.dumps(
        {"version": 1, "session_id": session, "generation": generation, "message": message}, separators=(",", ":")
    ).encode()
    return len(payload).to_bytes(4, "big") + payload


@pytest.fixture
def pair():
    a, b = socket.socketpair()
    yield a, b
    a.close()
    b.close()


@pytest.fixture
def rung():
    calls = []
    previous = signal.signal(DOORBELL_SIGNAL, lambda signum, frame: calls.append(signum))
    yield calls
    signal.signal(DOORBELL_SIGNAL, previous)


def _async(sock: socket.socket) -> bool:
    """Whether a message would signal a thread: O_ASYNC set and an owner (F_GETOWN_EX) named."""
    owner = struct.unpack("ii", fcntl.fcntl(sock.fileno(), 16, bytes(8)))[1]
    return bool(fcntl.fcntl(sock.fileno(), fcntl.F_GETFL) & os.O_ASYNC) and owner != 0


def test_it_rings_this_thread_only_while_wanted_and_the_loop_is_busy(pair, rung):
    a, b = pair
    bell = Doorbell(a)
    assert bell.usable and not _async(a)
    b.sendall(b"x")
    a.recv(1)
    assert rung == []  # off: a message costs no signal
    bell.want(True)
    assert _async(a)
    b.sendall(b"y")
    signal.pthread_sigmask(signal.SIG_BLOCK, [])  # a system call: a pending handler runs after it
    assert rung == [DOORBELL_SIGNAL]
    a.recv(1)
    bell.before_block()  # the loop blocks in select: off even while an operation's code is armed
    assert not _async(a) and bell.wanted
    bell.after_select()  # busy again with the code still armed: on
    assert _async(a)
    bell.want(False)
    assert _async(a)  # switched off only before the loop next blocks
    bell.before_block()
    bell.after_select()
    assert not _async(a)
    b.sendall(b"z")
    signal.pthread_sigmask(signal.SIG_BLOCK, [])
    assert rung == [DOORBELL_SIGNAL]


def test_it_keeps_the_sockets_other_flags(pair):
    a, _ = pair
    a.setblocking(False)
    bell = Doorbell(a)
    bell.want(True)
    bell.before_block()
    assert not a.getblocking()


def test_the_interrupt_is_found_unread_behind_other_frames_and_only_for_its_operation(pair):
    a, b = pair
    conn = Connection(a, "s-1", "g-1")
    conn.doorbell = Doorbell(a)
    assert not conn.interrupt_waiting("c-1")  # nothing there
    reply = _frame({"kind": "host_reply", "id": "r-1", "execution_id": "c-1", "reply": {"kind": "ok", "value": 1}})
    b.sendall(reply + _frame({"kind": "interrupt", "id": "c-2"}))
    assert not conn.interrupt_waiting("c-1")
    assert conn.interrupt_waiting("c-2")
    assert conn._decode(a.recv(1 << 16))[0][1] == {"kind": "interrupt", "id": "c-2"}  # still there to read
    frame = _frame({"kind": "interrupt", "id": "c-1"})
    b.sendall(frame[:-1])
    assert not conn.interrupt_waiting("c-1")  # not whole yet
    b.sendall(frame[-1:])
    assert conn.interrupt_waiting("c-1")
    b.sendall(_frame({"kind": "interrupt", "id": "c-3"}, session="s-2"))
    a.recv(len(frame))
    assert not conn.interrupt_waiting("c-3")  # not this connection's identity


def test_a_decoder_inside_a_frame_makes_it_look_nowhere(pair):
    a, b = pair
    conn = Connection(a, "s-1", "g-1")
    conn.doorbell = Doorbell(a)
    frame = _frame({"kind": "execute", "id": "c-1", "code": "1+1"})
    conn._decode(frame[:10])  # the rest of this frame comes first on the socket
    b.sendall(frame[10:] + _frame({"kind": "interrupt", "id": "c-1"}))
    assert not conn.interrupt_waiting("c-1")


def test_the_interrupt_payload_is_what_the_reader_reads_as_that_interrupt():
    reader = PlainReader('"s-1"', '"g-1"')
    for operation_id in ("c-1", "a" * 128, "x.y_z-0"):
        payload = reader.interrupt_payload(operation_id)
        assert reader.read(payload) == {"kind": "interrupt", "id": operation_id}
        assert payload == _frame({"kind": "interrupt", "id": operation_id})[4:]
