"""The worker's event loop shortcuts: one self-pipe read per wake-up, eager first step of a cell."""

from __future__ import annotations

import asyncio
import contextvars
import threading

from klbr.worker.loop import new_worker_loop, start_task


def _run(loop: asyncio.AbstractEventLoop, coro):
    try:
        return loop.run_until_complete(coro)
    finally:
        loop.close()


def test_the_first_step_runs_before_start_task_returns_and_inside_the_task():
    loop = new_worker_loop()
    seen: list = []

    async def cell():
        seen.append(("step", asyncio.current_task()))
        await asyncio.sleep(0)
        seen.append(("resumed", asyncio.current_task()))
        return 42

    async def main():
        started = asyncio.get_running_loop().create_future()

        def callback():
            task = start_task(loop, cell(), contextvars.copy_context(), lambda t: seen.append(("prepare", t)))
            seen.append(("returned", task))
            started.set_result(task)

        loop.call_soon(callback)
        task = await started
        assert await task == 42
        return task

    task = _run(loop, main())
    assert seen == [("prepare", task), ("step", task), ("returned", task), ("resumed", task)]


def test_the_step_runs_in_the_given_context():
    loop = new_worker_loop()
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="outside")
    context = contextvars.copy_context()
    context.run(var.set, "cell")
    got: list[str] = []

    async def cell():
        got.append(var.get())

    async def main():
        done = asyncio.get_running_loop().create_future()
        loop.call_soon(lambda: done.set_result(start_task(loop, cell(), context, lambda t: None)))
        await (await done)

    _run(loop, main())
    assert got == ["cell"]
    assert var.get() == "outside"


def test_a_loop_without_a_ready_queue_gets_a_plain_task():
    class Bare:
        created: list = []

        def create_task(self, coro, context=None):
            self.created.append(coro)
            return "task"

    async def cell():
        raise AssertionError("must not run")

    coro = cell()
    prepared: list = []
    assert start_task(Bare(), coro, contextvars.copy_context(), prepared.append) == "task"
    assert prepared == ["task"] and Bare.created == [coro]
    coro.close()


def test_a_task_factory_that_queues_more_than_its_step_leaves_the_step_to_the_loop():
    loop = new_worker_loop()
    order: list[str] = []

    def factory(loop_, coro, context=None):
        loop_.call_soon(order.append, "extra")
        return asyncio.Task(coro, loop=loop_, context=context)

    async def cell():
        order.append("step")

    async def main():
        loop.set_task_factory(factory)
        done = asyncio.get_running_loop().create_future()
        loop.call_soon(lambda: done.set_result(start_task(loop, cell(), contextvars.copy_context(), lambda t: None)))
        await (await done)

    _run(loop, main())
    assert order == ["extra", "step"]


def test_wake_ups_from_other_threads_are_all_delivered():
    loop = new_worker_loop()
    count = 2000
    senders = 2
    got: list[int] = []

    async def main():
        finished = asyncio.get_running_loop().create_future()

        def arrive(i: int) -> None:
            got.append(i)
            if len(got) == senders * count:
                finished.set_result(None)

        def send() -> None:
            for i in range(count):
                loop.call_soon_threadsafe(arrive, i)

        threads = [threading.Thread(target=send) for _ in range(senders)]
        for thread in threads:
            thread.start()
        await asyncio.wait_for(finished, 10)
        for thread in threads:
            thread.join()

    _run(loop, main())
    assert sorted(got) == sorted(list(range(count)) * senders)


def test_the_loop_reads_its_self_pipe_once_per_wake_up():
    loop = new_worker_loop()
    calls: list[int] = []
    ssock = loop._ssock  # type: ignore[attr-defined]

    class Counting:
        def recv(self, n):
            calls.append(n)
            return ssock.recv(n)

        def __getattr__(self, name):
            return getattr(ssock, name)

    loop._ssock = Counting()  # type: ignore[attr-defined]
    try:
        loop._write_to_self()  # type: ignore[attr-defined]
        loop._read_from_self()  # type: ignore[attr-defined]
        assert calls == [4096]
        loop._read_from_self()  # nothing left: one read, no error
        assert calls == [4096, 4096]
    finally:
        loop._ssock = ssock  # type: ignore[attr-defined]
        loop.close()
