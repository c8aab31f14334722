"""Differential oracle for the TypeScript frame tests: decodes a batch of byte streams.

stdin:  {"cases": ["<hex of a whole byte stream>", ...]}
stdout: {"results": [{"values": [...], "code": "FRAME_..." | null}, ...]}
Each stream is fed to one klbr.frame.FrameDecoder in one chunk, then eof(); ``values`` are the
values yielded before any error (accepted values never hold lone surrogates or non-finite
numbers, so plain JSON carries them exactly).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from klbr.frame import FrameDecoder, FrameError  # noqa: E402

__all__ = ["decode_stream", "main"]


def decode_stream(data: bytes) -> dict:
    """The values and the error code (or None) one decoder gives for a whole stream."""
    decoder = FrameDecoder()
    try:
        values = decoder.feed(data)
    except FrameError as error:
        return {"values": error.values, "code": error.code}
    try:
        decoder.eof()
    except FrameError as error:
        return {"values": values, "code": error.code}
    return {"values": values, "code": None}


def main() -> None:
    cases = json.load(sys.stdin)["cases"]
    results = [decode_stream(bytes.fromhex(case)) for case in cases]
    json.dump({"results": results}, sys.stdout, ensure_ascii=True, allow_nan=False)


if __name__ == "__main__":
    main()
