"""cProfile of a worker's main thread while it serves (the worker side of the supervisor's round trip).

Started by the host as the worker command (``packages/supervisor/bench/profile-rt.ts python``
with PROFILE_WORKER=1): ``python bench/profile_worker.py OUT --socket ...`` runs
:func:`klbr.worker.main.main` under cProfile and writes a short text summary (top self time) to
OUT when the worker returns, before the exit ``python -m klbr.worker`` would make. cProfile sees
only Python-level calls of the main thread (the loop and the cells); time in C shows as its caller's.
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import sys

__all__ = ["main"]


def main() -> None:
    out_path = sys.argv.pop(1)
    from klbr.worker.main import main as worker_main

    profile = cProfile.Profile()
    profile.enable()
    try:
        code = worker_main()
    finally:
        profile.disable()
        text = io.StringIO()
        stats = pstats.Stats(profile, stream=text)
        stats.sort_stats(os.environ.get("SORT", "tottime")).print_stats(int(os.environ.get("TOP", "30")))
        with open(out_path, "w", encoding="utf-8") as out:
            out.write(text.getvalue())
    os._exit(code)


if __name__ == "__main__":
    main()
