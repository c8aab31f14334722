"""Run a command in a pseudo-terminal and relay it: this process's stdin goes to the terminal as
typed (so b"\\x03" is a Ctrl-C the terminal's line discipline turns into SIGINT for the command's
foreground process group), and what the terminal shows comes out on stdout. When the command ends,
its exit status is written on stderr as `EXIT <code>` (128+N for a signal). Stdlib only.

    python3 pty_relay.py -- COMMAND ARGS...
"""

import fcntl
import os
import pty
import select
import struct
import sys
import termios


def main() -> int:
    argv = sys.argv[sys.argv.index("--") + 1 :]
    pid, master = pty.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    # A terminal of a usual size (a fresh pty is 0x0, which line editors take as one column).
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    stdin = sys.stdin.fileno()
    stdin_open = True
    while True:
        fds = [master] + ([stdin] if stdin_open else [])
        ready, _, _ = select.select(fds, [], [])
        if stdin in ready:
            data = os.read(stdin, 4096)
            if data:
                os.write(master, data)
            else:
                stdin_open = False
        if master in ready:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the command closed the terminal (it exited)
                data = b""
            if not data:
                break
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    sys.stderr.write(f"EXIT {code if code >= 0 else 128 - code}\n")
    sys.stderr.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
