"""cProfile of klbr.frame on the bench shapes: a short text summary per shape (no .prof files).

Run: python3 python/bench/profile_frame.py [decode|encode]. cProfile only sees Python-level
calls, so time inside C (json's scanner, str.decode) shows as the self time of its caller.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_frame import ROWS  # noqa: E402
from klbr.frame import decode_payload, encode_payload  # noqa: E402

__all__ = ["main"]


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "decode"
    for name, make, count in ROWS:
        values = [make(i) for i in range(min(count, 200))]
        payloads = [encode_payload(v) for v in values]
        size = sum(map(len, payloads))
        rounds = max(3, round(20e6 / size))
        if mode == "decode":
            def work() -> None:
                for p in payloads:
                    decode_payload(p)
        else:
            def work() -> None:
                for v in values:
                    encode_payload(v)
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(rounds):
            work()
        profile.disable()
        out = io.StringIO()
        stats = pstats.Stats(profile, stream=out)
        stats.sort_stats("tottime").print_stats(8)
        lines = [line for line in out.getvalue().splitlines() if line.strip()]
        start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls"))
        print(f"\n{mode} {name}: {rounds} rounds of {len(payloads)} payloads; {lines[0].strip()}")
        for line in lines[start : start + 9]:
            print("  " + line.replace(str(Path(__file__).resolve().parents[1]) + "/", ""))


if __name__ == "__main__":
    main()
