"""Reading fixtures/frame/*.json: byte streams, chunks and the value markers."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

__all__ = ["FRAME_FIXTURES", "case_chunks", "load_frame_files", "revive"]

FRAME_FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "frame"


def load_frame_files() -> list[tuple[str, str, list[dict]]]:
    """(name, kind, cases) for every fixtures/frame/*.json; a malformed file fails the run."""
    out = []
    for path in sorted(FRAME_FIXTURES.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["cases"], f"{path.name} holds no cases"
        assert data["kind"] in ("decode", "encode"), path.name
        out.append((path.name, data["kind"], data["cases"]))
    assert out, f"no vectors in {FRAME_FIXTURES}"
    return out


def _part(spec: Any) -> bytes:
    if isinstance(spec, str):
        return bytes.fromhex(spec)
    if "header" in spec:
        return spec["header"].to_bytes(4, "big")
    if "repeat" in spec:
        return bytes.fromhex(spec["repeat"]) * spec["count"]
    raise ValueError(f"unknown part {spec!r}")


def case_chunks(data: dict) -> list[bytes]:
    """The chunks a decode case feeds, in order."""
    if "hex" in data:
        return [bytes.fromhex(data["hex"])]
    if "chunks" in data:
        return [bytes.fromhex(c) for c in data["chunks"]]
    if "parts" in data:
        stream = b"".join(_part(p) for p in data["parts"])
        size = data.get("chunk_size") or max(len(stream), 1)
        return [stream[i : i + size] for i in range(0, len(stream), size)]
    raise ValueError(f"unknown input {data!r}")


_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def revive(value: Any) -> Any:
    """Replaces the fixture markers ($float, $repeat, $nest) by the values they stand for."""
    if isinstance(value, list):
        return [revive(v) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        (key, arg), = value.items()
        if key == "$float":
            return _FLOATS[arg]
        if key == "$repeat":
            return arg[0] * arg[1]
        if key == "$nest":
            out = revive(arg["leaf"])
            for _ in range(arg["depth"]):
                out = [out] if arg["kind"] == "array" else {"k": out}
            return out
        if key.startswith("$"):
            raise ValueError(f"unknown marker {key}")
    return {k: revive(v) for k, v in value.items()}
