"""klbr.header.revise against @klbr/header's revise, case by case, beyond the shared vectors.

The vectors in fixtures/header/revise.json avoid ties, so any minimal line diff passes them. This
test shows the Python port gives the *same* patches as TypeScript where minimal diffs are not
unique (small line alphabets, repeated lines, mixed endings), per source and joined, and around
the 1,024-edit cap where the change is carried full. It runs the TypeScript sources once through
the workspace's tsx (Node is part of this repository's toolchain: `pnpm test` runs both suites).
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

from klbr.header import MAX_EDIT_LENGTH, revise

ROOT = Path(__file__).resolve().parents[2]
TSX = ROOT / "node_modules" / ".bin" / "tsx"
HEADER_SRC = ROOT / "packages" / "header" / "src" / "index.ts"

SCRIPT = """
import { readFileSync } from "node:fs";
const header = await import(process.argv[2]);
const cases = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(cases.map((c) => header.revise(c.base, c.sources))));
"""

ALPHABET = ["a\n", "b\n", "c\n", "a\r\n", "\n", "\r\n", "a", "b", "x\ry\n", "\U0001f600\n"]


def _text(rng: random.Random, most: int) -> str:
    lines = [rng.choice(ALPHABET[:6]) for _ in range(rng.randint(0, most))]
    if rng.random() < 0.3:
        lines.append(rng.choice(ALPHABET[6:]))  # may end without a newline
    return "".join(lines)


def _edited(rng: random.Random, text: str) -> str:
    lines = text.splitlines(keepends=True)
    for _ in range(rng.randint(0, 4)):
        roll = rng.random()
        at = rng.randint(0, len(lines))
        if roll < 0.4 and lines:
            del lines[min(at, len(lines) - 1)]
        elif roll < 0.8:
            lines.insert(at, rng.choice(ALPHABET[:6]))
        elif lines:
            lines[min(at, len(lines) - 1)] = rng.choice(ALPHABET)
    return "".join(lines)


def _cases() -> list[dict]:
    rng = random.Random(20260913)
    cases: list[dict] = []
    for _ in range(300):  # joined: a bare base text
        base = _text(rng, 14)
        new = _edited(rng, base) if rng.random() < 0.7 else _text(rng, 14)
        cases.append({"base": base, "sources": [{"name": "s", "text": new}] if new or rng.random() < 0.5 else []})
    for _ in range(200):  # per source: names line up
        names = ["A", "B", "C"][: rng.randint(1, 3)]
        base = [{"name": n, "text": _text(rng, 8)} for n in names]
        new = [{"name": s["name"], "text": _edited(rng, s["text"])} for s in base]
        cases.append({"base": base, "sources": new})
    for _ in range(40):  # names that do not line up: the joined text
        base = [{"name": "A", "text": _text(rng, 6)}, {"name": "B", "text": _text(rng, 6)}]
        cases.append({"base": base, "sources": [{"name": "B", "text": base[1]["text"]}, {"name": "A", "text": _edited(rng, base[0]["text"])}]})
    # The cap: 512 + 512 edits is a diff, 513 + 513 is carried full; a reversal passes the
    # multiset bound but needs more than 1,024 edits.
    half = MAX_EDIT_LENGTH // 2
    for size in (half, half + 1):
        old = "".join(f"old {i}\n" for i in range(size))
        new = "".join(f"new {i}\n" for i in range(size))
        cases.append({"base": "keep\n" + old + "end\n", "sources": [{"name": "s", "text": "keep\n" + new + "end\n"}]})
    lines = [f"line {i}\n" for i in range(600)]
    cases.append({"base": "".join(lines), "sources": [{"name": "s", "text": "".join(reversed(lines))}]})
    cases.append({"base": "".join(lines), "sources": [{"name": "s", "text": "".join(lines[100:] + lines[:100])}]})
    return cases


def test_python_revise_is_typescript_revise(tmp_path):
    node = shutil.which("node")
    assert node is not None and TSX.exists(), "this cross-check needs the workspace's Node toolchain (pnpm install)"
    cases = _cases()
    script = tmp_path / "revise.mts"
    script.write_text(SCRIPT, encoding="utf-8")
    done = subprocess.run(
        # The source condition: @klbr/header imports @klbr/transcript, which CI has not built.
        [str(TSX), "--conditions=@klbr/source", str(script), str(HEADER_SRC)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        cwd=ROOT / "packages" / "header",
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    expected = json.loads(done.stdout)
    assert len(expected) == len(cases)
    differ = [i for i, case in enumerate(cases) if revise(case["base"], case["sources"]) != expected[i]]
    assert differ == [], f"{len(differ)} cases differ, first: {cases[differ[0]]!r}"
    # The batch exercises both forms, including the cap from both sides.
    forms = [change["form"] for change in expected]
    assert forms.count("diff") > 400 and forms.count("full") >= 2
    assert forms[-4:] == ["diff", "full", "full", "diff"]
