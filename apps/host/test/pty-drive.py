"""Drive a command in a pseudo-terminal, as a person at a keyboard would (tests only).

argv[1] is a JSON plan: {"argv": [...], "cwd": str, "env": {...}, "steps": [...]}, each step one of
  {"expect": regex}           wait until the output (after the last match) matches
  {"send": text}              type text (\\r is Enter, \\u0003 Ctrl-C, \\u0004 Ctrl-D)
  {"wait_file": path}         wait until the file exists (an event the test makes observable)
  {"touch": path}             create the file (an event the command's cell waits for)
Every wait is bounded by the plan's "timeout_s" (a guard against a hang, not a measure). Prints
one JSON object: {"status": exit status or null, "signal": n or null, "output": all output, "failed": step or null}.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import sys
import time


def main() -> None:
    plan = json.loads(sys.argv[1])
    timeout = float(plan.get("timeout_s", 90))
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(plan["cwd"])
        os.execvpe(plan["argv"][0], plan["argv"], plan["env"])
    out = bytearray()
    cursor = 0
    closed = False

    def pump(wait: float) -> None:
        nonlocal closed
        if closed:
            time.sleep(wait)
            return
        ready, _, _ = select.select([fd], [], [], wait)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if chunk:
                out.extend(chunk)
            else:
                closed = True

    failed = None
    for step in plan["steps"]:
        deadline = time.monotonic() + timeout
        if "send" in step:
            os.write(fd, step["send"].encode())
            continue
        if "touch" in step:
            with open(step["touch"], "a"):
                pass
            continue
        if "expect" in step:
            rx = re.compile(step["expect"].encode())
            while True:
                m = rx.search(bytes(out), cursor)
                if m:
                    cursor = m.end()
                    break
                if closed or time.monotonic() > deadline:
                    failed = step
                    break
                pump(0.2)
        elif "wait_file" in step:
            while not os.path.exists(step["wait_file"]):
                if closed or time.monotonic() > deadline:
                    failed = step
                    break
                pump(0.05)
        if failed is not None:
            break
    if failed is not None:
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while not closed and time.monotonic() < deadline:
        pump(0.2)
    if not closed:
        os.kill(pid, signal.SIGKILL)
        failed = failed or {"exit": "the command did not end"}
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    print(json.dumps({
        "status": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "output": out.decode("utf-8", "replace"),
        "failed": failed,
    }))


if __name__ == "__main__":
    main()
