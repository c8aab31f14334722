"""klbr_guard: run one command so that nothing it starts outlives it, or the host.

    python3 -I -S klbr_guard.py [--status-fd N] [--parent PID] [--limits JSON] -- ARGV...

The guard stays the command's parent for the command's whole life:

* It asks the kernel for SIGTERM when its parent (the host) dies (``PR_SET_PDEATHSIG``), so a
  ``kill -9`` of the host still ends the command and everything below it.
* It is a child subreaper (``PR_SET_CHILD_SUBREAPER``): whatever the command starts stays below the
  guard when its own parent exits, whether it called ``setsid``, double-forked or cleared its
  environment. When the command exits (or the guard is told to stop), every process still below
  the guard is frozen and killed, and the guard exits with the command's status: the same exit
  code, or death by the same signal.
* ``--status-fd N`` gets one line, then is closed: ``pid <child pid>`` once the command was
  executed, or ``error <errno> <message>`` when it could not be (the guard then exits 127).

Standard library only; started with ``-I -S`` so no environment variable or site file of the
command's environment changes what the guard does.
"""

import ctypes
import errno
import os
import sys
import time

# The C module: `signal` itself imports enum, which is most of this script's start-up time.
import _signal as signal

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
#: Signals the command may rely on having their default action (Python ignores SIGPIPE, SIGXFSZ).
_DEFAULTED = ("SIGPIPE", "SIGXFSZ", "SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")


class _Stop(Exception):
    """Raised by the guard's signal handler: stop the command's whole tree now."""


def _prctl(option, value):
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _children_map():
    children = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return children
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2 :].split()
        try:
            children.setdefault(int(fields[1]), []).append((int(name), fields[0]))
        except (IndexError, ValueError):
            continue
    return children


def _below(root):
    """Live (non-zombie) descendants of ``root``."""
    children = _children_map()
    found, todo = [], [root]
    while todo:
        for pid, state in children.get(todo.pop(), ()):
            todo.append(pid)
            if state not in (b"Z", b"X"):
                found.append(pid)
    return found


def _signal(pid, signum):
    try:
        os.kill(pid, signum)
    except OSError:
        pass


def _reap():
    """Reap every exited child; returns False once the guard has no child left."""
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        except InterruptedError:
            continue
        if pid == 0:
            return True


def _kill_below(limit=5.0):
    """Freeze then kill every process below the guard until none is left (or ``limit`` seconds)."""
    me = os.getpid()
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        # A stopped process can neither fork nor leave: stop them all, rescan, then kill.
        seen = set()
        for _ in range(16):
            fresh = [pid for pid in _below(me) if pid not in seen]
            if not fresh:
                break
            for pid in fresh:
                _signal(pid, signal.SIGSTOP)
            seen.update(fresh)
        for pid in seen:
            _signal(pid, signal.SIGKILL)
        if not _reap() and not seen:
            return
        time.sleep(0.005)


def _stop(signum, frame):
    raise _Stop(signum)


def _mirror(status):
    """Exit as the command did: its exit code, or death by its signal."""
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        try:
            signal.signal(signum, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
        except (OSError, ValueError, RuntimeError):
            pass
        os.kill(os.getpid(), signum)
        return 128 + signum
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1


def _write_status(fd, line):
    if fd is None:
        return
    try:
        os.write(fd, line.encode("utf-8", "replace"))
    except OSError:
        pass
    try:
        os.close(fd)
    except OSError:
        pass


def _parse(argv):
    status_fd, parent = None, None
    i = 0
    while i < len(argv) and argv[i] != "--":
        if argv[i] == "--status-fd":
            status_fd = int(argv[i + 1])
        elif argv[i] == "--parent":
            parent = int(argv[i + 1])
        else:
            raise SystemExit("klbr_guard: unknown option %r" % argv[i])
        i += 2
    command = argv[i + 1 :]
    if not command:
        raise SystemExit("klbr_guard: no command after --")
    return status_fd, parent, command


# ---- resource limits (C17) -------------------------------------------------------------------
# ``--limits JSON`` (before ``--``): ``{"join": [cgroup.procs paths], "rlimits": {"AS": [soft,
# hard], "CPU": ..., "NPROC": ..., "FSIZE": ...}}``. The command's process joins the cgroups and
# sets the rlimits itself, after the fork and before it executes the command: everything it
# starts is inside from its first instruction, and the guard stays outside (its cleanup is never
# the OOM killer's victim, nor refused a fork). A limit that cannot be applied fails the start
# (``error <errno> limits: ...`` on the status fd), never a run without it.


def _take_limits(argv):
    """Split ``--limits JSON`` off the guard's options: (the parsed spec or None, the other args)."""
    rest, spec, i = [], None, 0
    while i < len(argv):
        if argv[i] == "--":
            rest.extend(argv[i:])
            break
        if argv[i] == "--limits" and i + 1 < len(argv):
            import json

            spec = json.loads(argv[i + 1])
            i += 2
            continue
        rest.append(argv[i])
        i += 1
    return spec, rest


def _apply_limits(spec):
    """In the command's process, before exec: join the cgroups, then set the rlimits."""
    if not spec:
        return
    pid = str(os.getpid())
    for path in spec.get("join", ()):
        try:
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, pid.encode())
            finally:
                os.close(fd)
        except OSError as error:
            raise OSError(error.errno, "limits: cannot join %s: %s" % (path, error.strerror)) from None
    rlimits = spec.get("rlimits") or {}
    if rlimits:
        import resource

        for name, (soft, hard) in rlimits.items():
            try:
                resource.setrlimit(getattr(resource, "RLIMIT_" + name), (soft, hard))
            except (OSError, ValueError) as error:
                raise OSError(getattr(error, "errno", 0) or 22, "limits: cannot set RLIMIT_%s to %s: %s" % (name, soft, error)) from None


def main(argv):
    limits, argv = _take_limits(argv)
    status_fd, parent, command = _parse(argv)
    for name in ("SIGTERM", "SIGHUP", "SIGINT", "SIGQUIT"):
        signal.signal(getattr(signal, name), _stop)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    # The host may have died before the death signal was armed: then nothing is started at all.
    if parent is not None and os.getppid() != parent:
        _write_status(status_fd, "error %d the host (pid %d) is gone\n" % (errno.ESRCH, parent))
        return 127
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    report_r, report_w = os.pipe2(os.O_CLOEXEC)
    child = os.fork()
    if child == 0:
        try:
            os.close(report_r)
            if status_fd is not None:
                os.close(status_fd)
            for name in _DEFAULTED:
                signal.signal(getattr(signal, name), signal.SIG_DFL)
            _apply_limits(limits)
            os.execvp(command[0], command)
        except OSError as error:
            os.write(report_w, ("%d %s" % (error.errno or 0, error.strerror or error)).encode("utf-8", "replace"))
        except BaseException as error:  # noqa: BLE001 - the child must never return into the guard
            os.write(report_w, ("0 %s" % error).encode("utf-8", "replace"))
        os._exit(127)
    os.close(report_w)
    # The guard writes nothing: the command's output pipes close when the command's tree does.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    status = None
    try:
        failure = b""
        while True:
            chunk = os.read(report_r, 4096)
            if not chunk:
                break
            failure += chunk
        os.close(report_r)
        if failure:
            _write_status(status_fd, "error %s\n" % failure.decode("utf-8", "replace"))
            os.waitpid(child, 0)
            return 127
        _write_status(status_fd, "pid %d\n" % child)
        while status is None:
            pid, st = os.waitpid(-1, 0)
            if pid == child:
                status = st
    except _Stop:
        pass
    except ChildProcessError:
        pass
    # Ignore further stop requests: the kill below must finish.
    for name in ("SIGTERM", "SIGHUP", "SIGINT", "SIGQUIT"):
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    _kill_below()
    if status is None:
        return 128 + signal.SIGKILL
    return _mirror(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
