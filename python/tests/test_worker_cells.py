"""The cell compiler and runner: final expression, ``_``, top-level await, futures, tracebacks."""

from __future__ import annotations

import asyncio
import inspect
import sys

import pytest

from klbr.worker.cells import CellCompiler, CompiledCell, format_error, make_namespace, run_compiled


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


# -- the eval-first fast path gives what the general path gives ---------------------------------

_LONE_EXPRESSIONS = [
    "1+1", "x", "print", "f()", "a.b.c(1, 2)[3]", "(1,\n2)", "[i * i for i in range(3)]",
    "{'a': 1}", "not x or y", "await g()", "x if y else z", "f'{x!r:>10}'", "-1", "'\u00e9t\u00e9'",
    "1 # a comment", "# a comment\nx", "\n\nx", "x\n", "1 is 1", "()(1)", "...", "a < b <= c != d == e",
]


def _same_code(a, b) -> None:
    assert a.co_code == b.co_code
    assert a.co_flags == b.co_flags
    assert a.co_names == b.co_names
    assert a.co_filename == b.co_filename
    assert a.co_firstlineno == b.co_firstlineno
    assert list(a.co_positions()) == list(b.co_positions())
    assert len(a.co_consts) == len(b.co_consts)
    for x, y in zip(a.co_consts, b.co_consts):
        if hasattr(x, "co_code"):
            _same_code(x, y)
        else:
            assert x == y and type(x) is type(y)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("source", _LONE_EXPRESSIONS)
def test_a_lone_expression_compiles_to_the_general_paths_code(source):
    fast = CellCompiler().compile(source, "c1")
    general = CellCompiler().compile_general(source, "<cell c1>")
    assert fast.expression is not None and general.expression is not None
    _same_code(fast.expression, general.expression)
    # The general path's body is empty (nothing to run first); the fast path has none at all.
    assert fast.body is None or fast.body.co_code == general.body.co_code
    assert general.body.co_names == () and general.body.co_consts in ((None,), ())


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(
    "source",
    ["x = 1", "f(a=1)", "x\ny", "(y := 2)", "lambda: 1", "'\\d'", "1if x else 2", "[await g(x) for x in y]", "1;"],
)
def test_other_cells_take_the_general_path_and_behave_the_same(source):
    compiled = CellCompiler().compile(source, "c1")
    assert compiled.body is not None


def _warnings_of(compile_one) -> list[str]:
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            compile_one()
        except SyntaxError:
            pass
    return [f"{w.category.__name__}: {w.message}" for w in caught]


@pytest.mark.parametrize(
    "source",
    ["1 is 1", "x = 1 is 1", "(1 is 1, (yield))", "f(1 is 1, a=1, a=2)", "'\\d' + 1 is 1", "1.and 2",
     "(1)(2)", "(1 is 1, lambda: (yield))", "[1 is 1 for x in y]", "(1 is 1) +"],
)
def test_compile_warnings_are_emitted_as_often_as_by_the_general_path(source):
    fast = _warnings_of(lambda: CellCompiler().compile(source, "w1"))
    general = _warnings_of(lambda: CellCompiler().compile_general(source, "<cell w1>"))
    assert fast == general
    assert len(fast) <= 2


def test_fast_path_errors_match_the_general_path():
    for source in (" 1", "1 +", "(", "x\x00"):
        with pytest.raises((SyntaxError, ValueError)) as fast:
            CellCompiler().compile(source, "c1")
        with pytest.raises((SyntaxError, ValueError)) as general:
            CellCompiler().compile_general(source, "<cell c1>")
        assert type(fast.value) is type(general.value)
        assert str(fast.value) == str(general.value)


def test_a_lone_expression_cell_sets_underscore_and_keeps_future_flags(cell):
    cell("from __future__ import annotations")
    flags = cell.compiler.flags
    assert cell("2 * 21") == 42
    assert cell.namespace["_"] == 42
    assert cell.compiler.flags == flags
    assert cell("def f(a: undefined_name): pass\nf.__annotations__") == {"a": "undefined_name"}


# -- remembered lone expressions -----------------------------------------------------------------


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("source", _LONE_EXPRESSIONS + ["sum(i for i in range(3))", "{k: [j for j in v] for k, v in d}"])
def test_a_remembered_expression_is_what_compiling_it_again_gives(source):
    compiler = CellCompiler()
    first = compiler.compile(source, "c1")
    again = compiler.compile(source, "c2")
    fresh = CellCompiler().compile(source, "c2")
    _same_code(again.expression, fresh.expression)
    assert again.expression is not first.expression
    assert again.expression.co_filename == "<cell c2>"
    assert first.expression.co_filename == "<cell c1>"


@pytest.mark.parametrize("source", ["1 is 1", "x is not None", "(1)(2)", "'abc'['x']", "None(1)", "...[0]", "[1](2)"])
def test_an_expression_that_may_warn_warns_in_every_cell(source):
    compiler = CellCompiler()
    seen = [_warnings_of(lambda i=i: compiler.compile(source, f"w{i}")) for i in range(3)]
    fresh = _warnings_of(lambda: CellCompiler().compile_general(source, "<cell w9>"))
    assert seen == [fresh] * 3


def test_remembered_code_follows_future_flags(cell):
    cell("x = 1")
    assert cell("x + 1") == 2
    cell("from __future__ import annotations")
    assert cell("x + 1") == 2  # compiled again under the new flags, same value
    assert sorted(key[1] for key in cell.compiler._expressions if key[0] == "x + 1") == sorted(
        {key[1] for key in cell.compiler._expressions}
    )
    assert len({key[1] for key in cell.compiler._expressions}) == 2


def test_the_traceback_of_a_remembered_expression_names_its_own_cell(cell):
    cell("def boom(x):\n    raise ValueError(x)")
    filenames = set()
    for i in range(3):
        with pytest.raises(ValueError) as caught:
            cell("boom(7)")
        text = format_error(caught.value)
        assert text.count('File "<cell ') == 2
        assert "    boom(7)\n" in text and "    raise ValueError(x)\n" in text
        filenames.add(text.split('File "')[1].split('"')[0])
    assert len(filenames) == 3


def test_a_syntax_error_raised_by_a_cells_own_code_keeps_its_traceback(cell):
    # Only a cell that does not parse has no frame to show; compile() called by the cell does.
    with pytest.raises(SyntaxError) as caught:
        cell("compile('x = (', 'inner', 'exec')")
    text = format_error(caught.value)
    assert text.startswith("Traceback (most recent call last):\n")
    assert 'File "<cell c1>", line 1' in text
    assert "SyntaxError" in text


def test_without_a_cell_frame_the_worker_frames_before_the_error_are_hidden():
    # An error raised in code the cell did not compile (here a code object from another file),
    # as the worker catches it: its traceback starts in the worker's own frames.
    other = compile("1 / 0", "/elsewhere/module.py", "eval")
    compiled = CompiledCell("<not shown>", None, other)
    try:
        asyncio.run(run_compiled(compiled, {}))
    except ZeroDivisionError as error:
        tb = error.__traceback__
        while tb is not None and "klbr/worker" not in tb.tb_frame.f_code.co_filename:
            tb = tb.tb_next
        assert tb is not None
        exc = error.with_traceback(tb)
    text = format_error(exc)
    assert text.startswith("Traceback (most recent call last):\n")
    assert 'File "/elsewhere/module.py", line 1' in text
    assert "klbr/worker" not in text and "run_compiled" not in text
    assert text.rstrip().endswith("ZeroDivisionError: division by zero")


def test_inspect_getsource_reads_a_cells_function_as_written(cell):
    cell("def f():\n    return 1")
    assert cell("import inspect\ninspect.getsource(f)") == "def f():\n    return 1"


def test_annotations_are_evaluated_unless_the_cell_imported_the_future(cell):
    # The worker's own `from __future__ import annotations` must not leak into the cells.
    assert cell("def f(x: int) -> None:\n    pass\nf.__annotations__['x']") is int
