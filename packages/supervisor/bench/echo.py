"""Baseline for the supervisor bench: a plain length-prefixed JSON echo over a Unix socket."""

import json
import socket
import struct
import sys

__all__ = ["main"]


def main() -> None:
    """Connect to argv[1], then echo every frame back (decoded and re-encoded) until EOF."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(sys.argv[1])
    reader = sock.makefile("rb")
    while True:
        head = reader.read(4)
        if len(head) < 4:
            return
        (length,) = struct.unpack(">I", head)
        value = json.loads(reader.read(length))
        body = json.dumps(value, separators=(",", ":")).encode()
        sock.sendall(struct.pack(">I", len(body)) + body)


if __name__ == "__main__":
    main()
