"""klbr_guard: run one command so that nothing it starts outlives it, or the host.

    python3 -I -S klbr_guard.py [--status-fd N] [--parent PID] [--env-fd N [--bwrap-env]] [--limits JSON] -- ARGV...

The guard stays the command's parent for the command's whole life:

* It asks the kernel for SIGTERM when its parent (the host) dies (``PR_SET_PDEATHSIG``), so a
  ``kill -9`` of the host still ends the command and everything below it. ``--parent PID`` names
  the host: a host that died before the death signal was armed is seen (``getppid``), and nothing
  is started.
* It is a child subreaper (``PR_SET_CHILD_SUBREAPER``): whatever the command starts stays below the
  guard when its own parent exits, whether it called ``setsid``, double-forked or cleared its
  environment. When the command exits (or the guard is told to stop), every process still below
  the guard is frozen and killed, and the guard exits with the command's status: the same exit
  code, or death by the same signal.
* The command itself gets ``PR_SET_PDEATHSIG`` (SIGKILL) before it is executed, so it dies even
  if the guard does.
* ``--status-fd N`` gets ``pid <child pid>`` once the command was executed, or ``error <errno>
  <message>`` when it could not be (the guard then exits 127, and closes it). After a ``pid``
  line it stays open until the guard exits; a second line, ``clean``, says the guard's sweep ended
  with nothing left below it (every process killed and reaped). The guard is the subreaper of the
  whole tree, so nothing of the tree can have left it: the host needs no search of its own.
* ``--env-fd N``: the command's environment, NUL-separated ``NAME=VALUE`` entries read from fd N
  up to its end. The guard's own environment (and, with ``--bwrap-env``, bubblewrap's) stays the
  host's minimal one: variables meant for the command (``LD_PRELOAD``...) never reach a program
  that runs on the host. Without it the command inherits the guard's environment.
* ``--bwrap-env``: the command is bubblewrap. It is started with the guard's environment and is
  told, on an ``--args`` descriptor (not on its command line, which every user can read), to
  ``--clearenv`` and ``--setenv`` each entry: only what runs inside the sandbox gets them.

Stop signals (SIGTERM, SIGHUP, SIGINT, SIGQUIT) and SIGCHLD are blocked from the first statement
and taken synchronously (``sigwaitinfo``): no signal can interrupt the guard between starting the
command and being ready to kill it.

Standard library only; started with ``-I -S`` so no environment variable or site file changes what
the guard does.
"""

import ctypes
import errno
import os
import sys
import time

# The C module: `signal` itself imports enum, which is most of this script's start-up time.
import _signal as signal

# Blocked before anything else: a host that dies from here on leaves a pending SIGTERM, never an
# exception at an arbitrary point (between fork and being ready to kill the child, say).
_STOPS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT)
_WAITED = set(_STOPS) | {signal.SIGCHLD}
signal.pthread_sigmask(signal.SIG_BLOCK, _WAITED)

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
#: Signals the command may rely on having their default action (Python ignores SIGPIPE, SIGXFSZ).
_DEFAULTED = ("SIGPIPE", "SIGXFSZ", "SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")

_libc = None


def _prctl(option, value):
    global _libc
    try:
        if _libc is None:
            _libc = ctypes.CDLL(None, use_errno=True)
        return _libc.prctl(option, value, 0, 0, 0) == 0
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


def _children_of(pid):
    """The children of ``pid`` from its threads' ``children`` files; None where the kernel has none.

    Reads only the tree below the guard: a scan of every /proc entry costs each exit as much as
    the machine has processes (thousands, on a host with hundreds of workbenches).
    """
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return []  # gone meanwhile
    found = []
    for tid in tasks:
        try:
            with open("/proc/%d/task/%s/children" % (pid, tid), "rb") as handle:
                found.extend(int(child) for child in handle.read().split())
        except FileNotFoundError:
            if not os.path.exists("/proc/%d/task/%s" % (pid, tid)):
                continue  # the thread exited
            return None  # no children files (CONFIG_PROC_CHILDREN off)
        except (OSError, ValueError):
            continue
    return found


def _state(pid):
    try:
        with open("/proc/%d/stat" % pid, "rb") as handle:
            data = handle.read()
        return data[data.rfind(b")") + 2 :].split(None, 1)[0]
    except (OSError, IndexError):
        return b"X"


def _below(root):
    """Live (non-zombie) descendants of ``root``: a walk down the children files, else a /proc scan."""
    found, todo = [], [root]
    while todo:
        children = _children_of(todo.pop())
        if children is None:
            return _below_by_scan(root)
        for pid in children:
            todo.append(pid)
            if _state(pid) not in (b"Z", b"X"):
                found.append(pid)
    return found


def _below_by_scan(root):
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


def _reap(child=None):
    """Reap every exited child. Returns (children left, status of ``child`` if it was reaped)."""
    status = None
    while True:
        try:
            pid, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False, status
        if pid == 0:
            return True, status
        if pid == child:
            status = st


def _kill_below(limit=5.0):
    """Freeze then kill every process below the guard until none is left (True), or ``limit`` seconds pass (False)."""
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
        left, _ = _reap()
        if not left and not seen:
            return True
        time.sleep(0.005)
    return False


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


def _write_status(fd, line, close=True):
    if fd is None:
        return
    try:
        os.write(fd, line.encode("utf-8", "replace"))
    except OSError:
        pass
    if not close:
        return
    try:
        os.close(fd)
    except OSError:
        pass


def _parse(argv):
    opts = {"status_fd": None, "parent": None, "env_fd": None, "bwrap_env": False}
    i = 0
    while i < len(argv) and argv[i] != "--":
        if argv[i] == "--bwrap-env":
            opts["bwrap_env"] = True
            i += 1
            continue
        if argv[i] == "--status-fd":
            opts["status_fd"] = int(argv[i + 1])
        elif argv[i] == "--parent":
            opts["parent"] = int(argv[i + 1])
        elif argv[i] == "--env-fd":
            opts["env_fd"] = int(argv[i + 1])
        else:
            raise SystemExit("klbr_guard: unknown option %r" % argv[i])
        i += 2
    command = argv[i + 1 :]
    if not command:
        raise SystemExit("klbr_guard: no command after --")
    if opts["bwrap_env"] and opts["env_fd"] is None:
        raise SystemExit("klbr_guard: --bwrap-env needs --env-fd")
    return opts, command


def _read_env(fd):
    """The command's environment from ``fd``: NUL-separated NAME=VALUE entries, read to the end."""
    data = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except InterruptedError:
            continue
        if not chunk:
            break
        data.append(chunk)
    os.close(fd)
    env = {}
    for entry in b"".join(data).split(b"\0"):
        name, sep, value = entry.partition(b"=")
        if sep and name:
            env[name] = value
    return env


def _bwrap_args(env):
    """An --args descriptor telling bwrap to clear its environment and set ``env`` for the sandbox."""
    fd = os.memfd_create("klbr-bwrap-env", 0)
    os.set_inheritable(fd, True)
    parts = [b"--clearenv"]
    for name, value in env.items():
        parts += [b"--setenv", name, value]
    payload = b"\0".join(parts) + b"\0"
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _stop_pending():
    return bool(signal.sigpending() & set(_STOPS))


def _exec_child(command, env, report_w, guard_pid, limits=None):
    """In the forked child: never returns. Dies with the guard, joins its limits (C17), then becomes the command."""
    try:
        # Armed before anything else: from here a guard that dies for any reason takes the command.
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != guard_pid:
            os._exit(127)
        for name in _DEFAULTED:
            signal.signal(getattr(signal, name), signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _WAITED)
        _apply_limits(limits)
        if env is None:
            os.execvp(command[0], command)
        else:
            os.execvpe(command[0], command, env)
    except OSError as error:
        os.write(report_w, ("%d %s" % (error.errno or 0, error.strerror or error)).encode("utf-8", "replace"))
    except BaseException as error:  # noqa: BLE001 - the child must never return into the guard
        os.write(report_w, ("0 %s" % error).encode("utf-8", "replace"))
    os._exit(127)


def _wait(child):
    """Wait for the command to exit (its status) or for a stop signal (None)."""
    while True:
        info = signal.sigwaitinfo(_WAITED)
        if info.si_signo != signal.SIGCHLD:
            return None
        _, status = _reap(child)
        if status is not None:
            return status


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
    opts, command = _parse(argv)
    status_fd = opts["status_fd"]
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    # The host may have died before the death signal was armed: then nothing is started at all.
    if opts["parent"] is not None and os.getppid() != opts["parent"]:
        _write_status(status_fd, "error %d the host (pid %d) is gone\n" % (errno.ESRCH, opts["parent"]))
        return 127
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    env = _read_env(opts["env_fd"]) if opts["env_fd"] is not None else None
    if opts["bwrap_env"]:
        command = [command[0], "--args", str(_bwrap_args(env))] + command[1:]
        env = None  # bwrap itself runs with the guard's environment
    if _stop_pending():
        _write_status(status_fd, "error %d stopped before the command started\n" % errno.ECANCELED)
        return 127
    report_r, report_w = os.pipe2(os.O_CLOEXEC)
    guard_pid = os.getpid()
    child = os.fork()
    if child == 0:
        os.close(report_r)
        if status_fd is not None:
            os.close(status_fd)
        _exec_child(command, env, report_w, guard_pid, limits)
    os.close(report_w)
    # The guard writes nothing: the command's output pipes close when the command's tree does.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    failure = b""
    while True:
        chunk = os.read(report_r, 4096)
        if not chunk:
            break
        failure += chunk
    os.close(report_r)
    if failure:
        _write_status(status_fd, "error %s\n" % failure.decode("utf-8", "replace"))
        _kill_below()
        return 127
    _write_status(status_fd, "pid %d\n" % child, close=False)
    status = _wait(child)
    if _kill_below():
        _write_status(status_fd, "clean\n")
    if status is None:
        return 128 + signal.SIGKILL
    return _mirror(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
