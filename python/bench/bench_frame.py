"""Throughput of klbr.frame against plain json.loads, measured in the same run.

Run: python3 python/bench/bench_frame.py (``pnpm bench`` in packages/frame runs it too).
Prints MB/s and frames/s for the decoder and the encoder on the same payload shapes as the
TypeScript bench, with the ratio to a no-checks baseline; it asserts nothing.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from klbr.frame import FrameDecoder, encode_frame  # noqa: E402

__all__ = ["main"]


def _envelope(message: dict) -> dict:
    return {"version": 1, "session_id": "root", "generation": "g-1", "message": message}


def envelope_150(i: int) -> dict:
    request = {"method": "local.send", "text": "ok"}
    return _envelope({"kind": "host_request", "id": f"r-{i % 10}", "execution_id": "op-1", "request": request})


def cell_output_16k(i: int) -> dict:
    text, n = "", 0
    while len(text) < 16_000:
        text += f"step {n}: ok ✓ elapsed={n * 0.37:.2f}ms path=/work/src/module_{n}.py\n"
        n += 1
    output = [{"stream": "stdout", "text": text}, {"stream": "result", "text": "42"}]
    result = {"kind": "cell", "status": "ok", "output": output, "truncated_bytes": 0, "error": None}
    return _envelope({"kind": "completed", "id": f"op-{i}", "result": result})


def run_reply_1m(i: int) -> dict:
    lines, size, n = [], 0, 0
    while size < 700_000:
        line = f'   Compiling crate_{n} v0.{n % 10}.{n % 7} (/work/crates/crate_{n}) — "ok"\n'
        lines.append(line)
        size += len(line)
        n += 1
    value = {"exit_code": 0, "stdout": "".join(lines), "stderr": ("warning: unused import\n" * 12_000)[:250_000],
             "truncated_bytes": 0}
    return _envelope({"kind": "host_reply", "id": f"req-{i}", "execution_id": "op-1",
                      "reply": {"kind": "ok", "value": value}})


def records_1m(i: int) -> dict:
    rows = [{"id": n + i, "name": f"row-{n}", "score": n * 0.25, "ok": n % 3 == 0, "tags": ["a", "b"]}
            for n in range(9_000)]
    return _envelope({"kind": "host_reply", "id": f"req-{i}", "execution_id": "op-1",
                      "reply": {"kind": "ok", "value": {"rows": rows}}})


_BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def display_700k(i: int) -> dict:
    a, chars = (i + 1) * 0x9E3779B1 & 0xFFFFFFFF, []
    for _ in range(700 * 1024):
        a = (a * 1664525 + 1013904223) & 0xFFFFFFFF
        chars.append(_BASE64[a >> 26])
    data = {"image/png": "".join(chars), "text/plain": "<Figure size 640x480 with 1 Axes>"}
    return _envelope({"kind": "display", "id": "op-1", "seq": i % 32, "data": data,
                      "metadata": {"image/png": {"width": 640, "height": 480}}})


def baseline_decode(stream: bytes) -> list:
    out, at = [], 0
    while at < len(stream):
        length = int.from_bytes(stream[at : at + 4], "big")
        out.append(json.loads(stream[at + 4 : at + 4 + length].decode("utf-8")))
        at += 4 + length
    return out


def klbr_decode(stream: bytes) -> list:
    decoder = FrameDecoder()
    out = decoder.feed(stream)
    decoder.eof()
    return out


def baseline_encode(values: list) -> int:
    total = 0
    for value in values:
        body = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        total += len(len(body).to_bytes(4, "big") + body)
    return total


def klbr_encode(values: list) -> int:
    return sum(len(encode_frame(value)) for value in values)


def _rate(fn, seconds: float) -> float:
    """Calls per CPU second (process time, so other processes skew it less)."""
    calls, start = 0, time.process_time()
    now = start
    while now - start < seconds:
        fn()
        calls += 1
        now = time.process_time()
    return calls / (now - start)


def _compare(base, ours) -> tuple[float, float, float]:
    """Medians over paired rounds of the baseline rate, our rate, and the per-round ratio."""
    _rate(base, 0.2)
    _rate(ours, 0.2)
    bases, ourses, ratios = [], [], []
    for _ in range(9):
        b, o = _rate(base, 0.15), _rate(ours, 0.15)
        bases.append(b)
        ourses.append(o)
        ratios.append(o / b)
    return statistics.median(bases), statistics.median(ourses), statistics.median(ratios)


ROWS = [
    ("150-byte envelopes", envelope_150, 2000),
    ("16 KiB cell outputs", cell_output_16k, 60),
    ("~1 MiB workspace.run reply", run_reply_1m, 2),
    ("700 KiB base64 display", display_700k, 2),
    ("~1 MiB of small records", records_1m, 2),
]


def main() -> None:
    print(f"python {sys.version.split()[0]}; CPU-time rates; medians of 9 paired rounds")
    print(f"{'decode':40} {'frame bytes':>11}   {'json.loads MB/s':>15} {'frames/s':>10}   "
          f"{'klbr.frame MB/s':>15} {'frames/s':>10}   ratio")
    prepared = []
    for name, make, count in ROWS:
        values = [make(i) for i in range(count)]
        stream = b"".join(encode_frame(v) for v in values)
        prepared.append((name, values, stream))
        assert klbr_decode(stream) == baseline_decode(stream), name
        base, ours, ratio = _compare(lambda: baseline_decode(stream), lambda: klbr_decode(stream))
        mb = len(stream) / 1e6
        print(f"{name:40} {len(stream) // count:>11}   {mb * base:>15.0f} {count * base:>10,.0f}   "
              f"{mb * ours:>15.0f} {count * ours:>10,.0f}   {ratio:.2f}")
    print("\nencode (json.dumps + header vs encode_frame with its checks)")
    for name, values, stream in prepared:
        base, ours, ratio = _compare(lambda: baseline_encode(values), lambda: klbr_encode(values))
        mb = len(stream) / 1e6
        print(f"{name:40} baseline {mb * base:6.0f} MB/s  klbr.frame {mb * ours:6.0f} MB/s  ratio {ratio:.2f}")


if __name__ == "__main__":
    main()
