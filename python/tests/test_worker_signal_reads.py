"""The doorbell's reads of the SIGINT handler and mask: the C functions agree with signal.py's wrappers."""

from __future__ import annotations

import signal
import threading

import pytest

from klbr.worker.server import sigint_blocked, sigint_handler


class _Owner:
    def on_sigint(self, signum, frame):  # a bound method, as the worker's own handler is
        pass


def _plain_function(signum, frame):
    pass


@pytest.fixture
def restore_sigint():
    previous = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, previous)


def test_the_handler_compares_as_signal_getsignal_does_for_every_kind_of_handler(restore_sigint):
    owner, other = _Owner(), _Owner()
    installed = [signal.SIG_DFL, signal.SIG_IGN, signal.default_int_handler, _plain_function, owner.on_sigint]
    candidates = [*installed, other.on_sigint, 0, 1, None, signal.Handlers.SIG_DFL, signal.Handlers.SIG_IGN]
    for handler in installed:
        signal.signal(signal.SIGINT, handler)
        for candidate in candidates:
            assert (sigint_handler() == candidate) == (signal.getsignal(signal.SIGINT) == candidate), (handler, candidate)
    signal.signal(signal.SIGINT, owner.on_sigint)
    assert sigint_handler() == owner.on_sigint  # a fresh bound method each time, equal to the installed one
    assert sigint_handler() != other.on_sigint


def test_blocked_is_what_the_wrapped_mask_says_in_this_thread_and_another():
    def check(seen: list) -> None:
        for how in (signal.SIG_BLOCK, signal.SIG_UNBLOCK):
            signal.pthread_sigmask(how, {signal.SIGINT})
            try:
                seen.append((sigint_blocked(), signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, ())))
            finally:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        # Another signal blocked says nothing about SIGINT.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2})
        try:
            seen.append((sigint_blocked(), signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, ())))
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR2})

    here: list = []
    check(here)
    there: list = []
    thread = threading.Thread(target=check, args=(there,))
    thread.start()
    thread.join()
    for seen in (here, there):
        assert seen == [(True, True), (False, False), (False, False)]
