"""The worker's event loop: asyncio's selector loop with three shortcuts on the cell's path.

Both use the pure-Python ``BaseEventLoop`` internals of CPython 3.11-3.13 (``_ready``,
``_ssock``, ``_process_self_data``); when they are not there, the stock behaviour is kept.

* **One read of the self-pipe per wake-up.** The reader thread wakes the loop for every message
  (``call_soon_threadsafe`` writes one byte). asyncio then reads the self-pipe until it is empty,
  which costs a second ``recv`` and a BlockingIOError every time. One read is enough: the pipe is
  level-triggered, so a byte written after it wakes the selector again.
* **Eager first step of a cell's task** (:func:`start_task`). ``create_task`` only queues the
  task's first step, which then waits one more loop iteration (a selector poll and the timer
  heap) before the cell runs. The cell's task runs that step at once instead, still as a Task
  (``asyncio.current_task()`` is the cell's), like Python 3.12's eager tasks: a cell that does
  not await completes within the callback that received it.
* **A watch around every select** (:meth:`WorkerSelector.select`): the connection reads the host's
  socket itself as the select returns (no reader thread between the host and the cell), and a
  thread takes over reading whenever the loop is out of a blocking select (see
  ``connection.py``). The hook also drops the socket's own event, so no handle is made for it.
"""

from __future__ import annotations

import asyncio
import contextvars
import selectors
from collections import deque
from typing import Any, Callable, Coroutine, Protocol

__all__ = ["SelectWatch", "WorkerSelector", "new_worker_loop", "start_task"]


class SelectWatch(Protocol):
    """What :class:`WorkerSelector` tells around each select."""

    def before_block(self) -> None:
        """The loop is about to block in select (a select with a timeout of 0 is not announced)."""

    def after_select(self, ready: list, blocked: bool) -> list:
        """The select returned ``ready``; returns what the loop is to process of it."""


class WorkerSelector(selectors.DefaultSelector):  # type: ignore[misc,valid-type]
    """The default selector, telling ``watch`` (when set) around every select."""

    watch: SelectWatch | None = None

    def select(self, timeout: float | None = None) -> list:
        watch = self.watch
        if watch is None:
            return super().select(timeout)
        blocked = timeout is None or timeout > 0
        if blocked:
            watch.before_block()
        return watch.after_select(super().select(timeout), blocked)


class _WorkerLoop(asyncio.SelectorEventLoop):  # type: ignore[misc,valid-type]
    def _read_from_self(self) -> None:
        try:
            data = self._ssock.recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        if data:
            self._process_self_data(data)


def new_worker_loop() -> asyncio.AbstractEventLoop:
    """The loop the worker runs on (a stock selector loop when its internals are unknown)."""
    base = asyncio.SelectorEventLoop
    if all(hasattr(base, name) for name in ("_read_from_self", "_process_self_data")):
        return _WorkerLoop(WorkerSelector())
    return asyncio.SelectorEventLoop(WorkerSelector())


def start_task(
    loop: asyncio.AbstractEventLoop,
    coro: Coroutine[Any, Any, Any],
    context: contextvars.Context,
    prepare: Callable[[asyncio.Task], None],
) -> asyncio.Task:
    """``loop.create_task(coro, context=context)``, with the task's first step run now.

    ``prepare(task)`` is called before the step runs, so whoever tracks the task has it (and its
    done callbacks) in place while its code runs. Call this from a callback of ``loop`` (not from
    inside a task): the step enters the task as the loop would. The step is run only when the
    task queued exactly one handle (its step) at the end of the ready queue; otherwise it is left
    to the loop.
    """
    ready = getattr(loop, "_ready", None)
    before = len(ready) if type(ready) is deque else -1
    task = loop.create_task(coro, context=context)
    prepare(task)
    if before >= 0 and len(ready) == before + 1:  # type: ignore[arg-type]
        step = ready.pop()  # type: ignore[union-attr]
        step._run()
    return task
