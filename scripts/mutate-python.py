#!/usr/bin/env python3
"""Mutation testing for the Python worker, stdlib only (issue 38): one small change at a time.

    python3 scripts/mutate-python.py python/klbr/worker/live.py -- tests/test_worker_live.py ...
    python3 scripts/mutate-python.py FILE --list                 # the mutants, numbered, nothing run
    python3 scripts/mutate-python.py FILE --only 3,17 -- TESTS   # just those

Each mutant is one AST-level swap in FILE: an arithmetic operator (+ -, * /, // /, % *), a
comparison (< <=, > >=, == !=, is / is not, in / not in), `and`/`or`, a `not` dropped, a number
moved by one (0 1, n n+1), True/False, an augmented assignment's operator, or an `if`/`while`
test negated. Docstrings, strings, `__all__` and lines marked `# pragma: no mutate` are left.

The mutated module is written over FILE (the worker is a subprocess that imports it from disk),
pytest runs the given test files (relative to python/, `-x`, in a new process group, killed at
the timeout), and FILE is restored after every mutant, on Ctrl-C and on any error. A mutant is
killed when pytest fails or times out, survived when it passes. The score is killed / all; the
JSON report (reports/mutation/python-NAME.json) lists every mutant with its line and status.
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = ROOT / "python"

ARITH = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Div, ast.Mod: ast.Mult, ast.BitOr: ast.BitAnd, ast.BitAnd: ast.BitOr, ast.LShift: ast.RShift, ast.RShift: ast.LShift}
COMPARE = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.BitOr: "|", ast.BitAnd: "&", ast.LShift: "<<", ast.RShift: ">>", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in", ast.And: "and", ast.Or: "or"}


@dataclass
class Mutant:
    index: int
    line: int
    col: int
    kind: str
    description: str
    status: str = "pending"
    seconds: float = 0.0


def docstring_nodes(tree: ast.AST) -> set[int]:
    """The ids of docstring constants (a module's, a class's, a function's first statement)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                found.add(id(first.value))
    return found


def skipped_nodes(tree: ast.AST) -> set[int]:
    """Nodes under `__all__ = [...]` (a listing, not behaviour) and in annotations (`str | None`)."""
    found: set[int] = set()
    under: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            under.append(node)
        elif isinstance(node, ast.AnnAssign):
            under.append(node.annotation)
        elif isinstance(node, ast.arg) and node.annotation is not None:
            under.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            under.append(node.returns)
    for root in under:
        found.update(id(n) for n in ast.walk(root))
    # Module-level type aliases (`Encode = Callable[...]`): subscripts of typing names, not values.
    for node in getattr(tree, "body", []):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Subscript):
            found.update(id(n) for n in ast.walk(node.value))
    return found


def sites(tree: ast.AST, source_lines: list[str]) -> list[tuple[ast.AST, str, str, object]]:
    """Every mutation site in walk order: (node, kind, description, what to change it to)."""
    skip = docstring_nodes(tree) | skipped_nodes(tree)
    out: list[tuple[ast.AST, str, str, object]] = []

    def pragma(node: ast.AST) -> bool:
        line = getattr(node, "lineno", None)
        return line is not None and "pragma: no mutate" in source_lines[line - 1]

    for node in ast.walk(tree):
        if id(node) in skip or pragma(node):
            continue
        if isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in ARITH:
            to = ARITH[type(node.op)]
            out.append((node, "arith", f"{SYMBOL[type(node.op)]} -> {SYMBOL[to]}", to))
        elif isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if type(op) in COMPARE:
                    to = COMPARE[type(op)]
                    out.append((node, "compare", f"{SYMBOL[type(op)]} -> {SYMBOL[to]}", (i, to)))
        elif isinstance(node, ast.BoolOp):
            to = ast.Or if isinstance(node.op, ast.And) else ast.And
            out.append((node, "boolop", f"{SYMBOL[type(node.op)]} -> {SYMBOL[to]}", to))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            out.append((node, "not", "not x -> x", None))
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            out.append((node, "bool", f"{node.value} -> {not node.value}", not node.value))
        elif isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            to = 1 if node.value == 0 else node.value + 1
            out.append((node, "number", f"{node.value!r} -> {to!r}", to))
        elif isinstance(node, (ast.If, ast.While)) and not isinstance(node.test, ast.Constant):
            out.append((node, "negate", f"{type(node).__name__.lower()} test negated", None))
    return out


def mutate(tree: ast.AST, source_lines: list[str], index: int) -> str:
    """The module's source with site `index` changed."""
    tree = copy.deepcopy(tree)
    node, kind, _desc, to = sites(tree, source_lines)[index]
    if kind == "arith":
        node.op = to()  # type: ignore[attr-defined]
    elif kind == "compare":
        i, op = to  # type: ignore[misc]
        node.ops[i] = op()  # type: ignore[attr-defined]
    elif kind == "boolop":
        node.op = to()  # type: ignore[attr-defined]
    elif kind in ("bool", "number"):
        node.value = to  # type: ignore[attr-defined]
    elif kind == "not":
        # Replace `not x` by `x` in its parent.
        for parent in ast.walk(tree):
            for field, value in ast.iter_fields(parent):
                if value is node:
                    setattr(parent, field, node.operand)  # type: ignore[attr-defined]
                elif isinstance(value, list):
                    for j, item in enumerate(value):
                        if item is node:
                            value[j] = node.operand  # type: ignore[attr-defined]
    elif kind == "negate":
        node.test = ast.UnaryOp(op=ast.Not(), operand=node.test)  # type: ignore[attr-defined]
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def run_tests(tests: list[str], timeout: float) -> tuple[str, float]:
    """Run pytest in its own process group; 'killed', 'survived' or 'timeout'."""
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-B", "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
        cwd=PYTHON,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "KLBR_MUTATION": "1"},
    )
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return "timeout", time.monotonic() - start
    return ("survived" if code == 0 else "killed"), time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", type=Path)
    parser.add_argument("tests", nargs="*", help="pytest files relative to python/ (after --)")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--only", default="", help="comma-separated mutant numbers")
    parser.add_argument("--timeout", type=float, default=0, help="seconds per mutant (default: 3x the baseline, at least 60)")
    args = parser.parse_args()

    path = args.file.resolve()
    original = path.read_text(encoding="utf-8")
    lines = original.splitlines()
    tree = ast.parse(original)
    all_sites = sites(tree, lines)
    mutants = [Mutant(i, getattr(n, "lineno", 0), getattr(n, "col_offset", 0), kind, desc) for i, (n, kind, desc, _) in enumerate(all_sites)]
    if args.list:
        for m in mutants:
            print(f"{m.index:4d}  {path.name}:{m.line}  {m.kind:8s} {m.description}  | {lines[m.line - 1].strip()[:80]}")
        return 0
    if not args.tests:
        parser.error("name the pytest files after --")
    chosen = [mutants[int(i)] for i in args.only.split(",") if i] if args.only else mutants

    def restore() -> None:
        if path.read_text(encoding="utf-8") != original:
            path.write_text(original, encoding="utf-8")

    def on_signal(signum, _frame):  # noqa: ANN001
        restore()
        sys.exit(128 + signum)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    report_path = ROOT / "reports" / "mutation" / f"python-{path.stem}.json"
    report_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        # The baseline runs the unparsed original: the mutants are unparsed too, so a failure that
        # unparsing alone causes would otherwise count every mutant as killed.
        path.write_text(ast.unparse(tree) + "\n", encoding="utf-8")
        status, seconds = run_tests(args.tests, 600)
        restore()
        if status != "survived":
            print(f"baseline: the tests do not pass on the unmutated (unparsed) module ({status})", file=sys.stderr)
            return 2
        timeout = args.timeout or max(60.0, 3 * seconds)
        print(f"baseline {seconds:.1f} s; {len(chosen)} mutants, {timeout:.0f} s each at most", flush=True)
        for m in chosen:
            path.write_text(mutate(tree, lines, m.index), encoding="utf-8")
            try:
                m.status, m.seconds = run_tests(args.tests, timeout)
            finally:
                restore()
            print(f"{m.index:4d} {m.status:8s} {path.name}:{m.line} {m.kind} {m.description} | {lines[m.line - 1].strip()[:70]}", flush=True)
    finally:
        restore()
    killed = sum(m.status in ("killed", "timeout") for m in chosen)
    score = 100.0 * killed / len(chosen) if chosen else 100.0
    rel = str(path.relative_to(ROOT))
    previous = json.loads(report_path.read_text()) if report_path.exists() and args.only else None
    merged = {m["index"]: m for m in (previous or {}).get("mutants", [])}
    merged.update({m.index: asdict(m) for m in chosen})
    total = list(merged.values())
    total_killed = sum(m["status"] in ("killed", "timeout") for m in total)
    report_path.write_text(json.dumps({"file": rel, "tests": args.tests, "mutants": sorted(total, key=lambda m: m["index"])}, indent=1) + "\n")
    print(f"\n{rel}: {score:.1f}% of this run ({killed}/{len(chosen)}); report {100.0 * total_killed / len(total):.1f}% ({total_killed}/{len(total)}) -> {report_path}")
    for m in chosen:
        if m.status == "survived":
            print(f"  survived {m.index}: line {m.line} {m.kind} {m.description} | {lines[m.line - 1].strip()[:80]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
