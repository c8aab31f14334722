"""The cell compiler and runner: final expression, ``_``, top-level await, futures, tracebacks."""

from __future__ import annotations

import asyncio
import inspect
import sys

import pytest

from klbr.worker.cells import CellCompiler, format_error, make_namespace, run_compiled


@pytest.fixture
def cell():
    saved = sys.modules["__main__"]
    namespace = make_namespace(marker=1)
    compiler = CellCompiler()
    counter = iter(range(1, 1000))

    def run(source: str):
        compiled = compiler.compile(source, f"c{next(counter)}")
        return asyncio.run(run_compiled(compiled, namespace))

    run.namespace = namespace
    run.compiler = compiler
    yield run
    sys.modules["__main__"] = saved


def test_the_final_expression_is_the_value(cell):
    assert cell("x = 20\nx + 22") == 42
    assert cell("x") == 20


def test_no_final_expression_gives_none(cell):
    assert cell("y = 1") is None
    assert cell("if True:\n    y = 2") is None
    assert cell.namespace["y"] == 2


def test_underscore_keeps_the_last_non_none_value(cell):
    cell("5")
    assert cell.namespace["_"] == 5
    cell("None")
    cell("print")  # evaluating a name is an expression too
    assert cell.namespace["_"] is print
    cell("z = 3")
    assert cell("_") is print


def test_namespace_persists_and_is_main(cell):
    cell("def f():\n    return __name__")
    assert cell("f()") == "__main__"
    assert sys.modules["__main__"].__dict__ is cell.namespace
    assert cell("marker") == 1


def test_top_level_await(cell):
    assert cell("import asyncio\nawait asyncio.sleep(0)\nawait asyncio.sleep(0, result=7)") == 7


def test_await_only_makes_a_coroutine_when_used():
    compiler = CellCompiler()
    plain = compiler.compile("1 + 1", "a")
    awaiting = compiler.compile("import asyncio\nawait asyncio.sleep(0)", "b")
    assert not plain.expression.co_flags & inspect.CO_COROUTINE
    assert awaiting.expression.co_flags & inspect.CO_COROUTINE


def test_asyncio_tasks_and_gather_work_in_a_cell(cell):
    source = (
        "import asyncio\n"
        "async def double(n):\n"
        "    await asyncio.sleep(0)\n"
        "    return 2 * n\n"
        "await asyncio.gather(*(asyncio.create_task(double(i)) for i in range(3)))"
    )
    assert cell(source) == [0, 2, 4]


def test_asyncio_run_inside_a_cell_raises(cell):
    with pytest.raises(RuntimeError, match="running event loop"):
        cell("import asyncio\nasync def f():\n    return 1\nc = f()\ntry:\n    asyncio.run(c)\nfinally:\n    c.close()")


def test_future_flags_persist_across_cells(cell):
    cell("from __future__ import annotations")
    assert cell("def f(x: NotDefinedAnywhere) -> None:\n    pass\nf.__annotations__['x']") == "NotDefinedAnywhere"


def test_syntax_error_names_the_cell():
    compiler = CellCompiler()
    with pytest.raises(SyntaxError) as caught:
        compiler.compile("x = (", "bad-cell")
    assert caught.value.filename == "<cell bad-cell>"
    text = format_error(caught.value)
    assert "SyntaxError" in text and "<cell bad-cell>" in text


def test_traceback_shows_cell_lines_and_hides_worker_frames(cell):
    with pytest.raises(ZeroDivisionError) as caught:
        cell("def inner():\n    return 1 / 0\ninner()")
    text = format_error(caught.value)
    assert text.startswith("Traceback (most recent call last):\n")
    assert 'File "<cell c1>", line 3' in text and "return 1 / 0" in text
    assert "klbr/worker" not in text and "run_compiled" not in text
    assert text.rstrip().endswith("ZeroDivisionError: division by zero")


def test_chained_exceptions_are_formatted(cell):
    with pytest.raises(KeyError) as caught:
        cell("try:\n    1/0\nexcept ZeroDivisionError:\n    raise KeyError('k')")
    text = format_error(caught.value)
    assert "ZeroDivisionError" in text and "During handling of the above exception" in text


def test_final_expression_after_statements_runs_in_order(cell):
    assert cell("out = []\nout.append(1)\nout.append(2)\nout") == [1, 2]
