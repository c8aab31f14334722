"""``python -m klbr.worker``: start one worker and serve its connection.

Order of startup: take the token out of the environment (before anything else can read it or
a child can inherit it), become a child subreaper, load the skills file (which it deletes) and,
for the hooks role, the behaviour source, then connect, send ``hello`` and serve.

With ``--token-stdin`` the process is a keeper instead (:mod:`klbr.worker.keeper`): the token is
the first line of stdin, and the worker runs as its child.

With ``--identity-stdin`` the worker is a warm spare (C19): it does all of its startup (imports,
skills, source, the connection, its loop and threads) and then blocks reading one line of stdin,
``{"session_id": ..., "generation": ...}``, the identity of every envelope; only then does it say
``hello``, so its first frame already names the session that took it (it sends nothing before).
EOF instead of that line (the host dropped the spare) is a quiet exit 0.

Exit codes: 0 after ``shutdown`` or a clean EOF; 1 when startup fails; 2 on a protocol error
from the host. Every failure prints one ``klbr.worker: ...`` line on stderr.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Sequence

from klbr._version import __version__

from .errors import WorkerError

__all__ = ["MAX_IDENTITY_LINE_BYTES", "TOKEN_ENV", "main", "parse_args", "read_identity"]

#: The environment variable that carries the startup token (C3); removed before any cell runs.
TOKEN_ENV = "KLBR_WORKER_TOKEN"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the worker's command line."""
    parser = argparse.ArgumentParser(prog="python -m klbr.worker", description="klbr runtime worker")
    parser.add_argument("--socket", required=True, help="the host's Unix socket path")
    parser.add_argument("--role", required=True, choices=("workbench", "hooks"))
    parser.add_argument("--session", help="session id of every envelope")
    parser.add_argument("--generation", help="generation id of every envelope")
    parser.add_argument("--skills", help="skills.json to install (read and deleted before connecting)")
    parser.add_argument("--source", help="behaviour source root (hooks role)")
    parser.add_argument(
        "--live-output",
        action="store_true",
        help="send the running cell's stdout/stderr as C16 output messages (workbench role)",
    )
    parser.add_argument(
        "--display",
        action="store_true",
        help="send the running cell's rich displays as C20 display messages (workbench role)",
    )
    parser.add_argument(
        "--token-stdin",
        action="store_true",
        help="read the token as the first line of stdin and keep the worker (see klbr.worker.keeper)",
    )
    parser.add_argument(
        "--limits",
        help='with --token-stdin: rlimits the keeper sets on the worker, {"rlimits": {"AS": [soft, hard], ...}} (C17)',
    )
    parser.add_argument(
        "--identity-stdin",
        action="store_true",
        help="start as a warm spare: read the session and generation as one JSON line of stdin before connecting",
    )
    args = parser.parse_args(argv)
    if args.identity_stdin:
        if args.session is not None or args.generation is not None or args.token_stdin:
            parser.error("--identity-stdin takes the session and generation from stdin, not from --session/--generation/--token-stdin")
    elif args.session is None or args.generation is None:
        parser.error("--session and --generation are required (or --identity-stdin)")
    return args


#: The identity line of a spare is at most this many bytes (two identifiers of 128 and the JSON around them).
MAX_IDENTITY_LINE_BYTES = 512


def read_identity(stream) -> tuple[str, str] | None:
    """The spare's ``(session_id, generation)`` from one JSON line of ``stream`` (binary), or None on EOF."""
    import json

    from klbr.envelope import is_identifier

    line = stream.readline(MAX_IDENTITY_LINE_BYTES + 1)
    if not line:
        return None
    if len(line) > MAX_IDENTITY_LINE_BYTES or not line.endswith(b"\n"):
        raise WorkerError("WORKER_IDENTITY_INVALID", f"the identity line is longer than {MAX_IDENTITY_LINE_BYTES} bytes or unterminated")
    try:
        value = json.loads(line.decode("utf-8"))
    except ValueError as error:
        raise WorkerError("WORKER_IDENTITY_INVALID", f"the identity line is not JSON: {error}") from None
    if not isinstance(value, dict) or set(value) != {"session_id", "generation"}:
        raise WorkerError("WORKER_IDENTITY_INVALID", 'the identity line must be {"session_id": ..., "generation": ...}')
    session, generation = value["session_id"], value["generation"]
    if not is_identifier(session) or not is_identifier(generation):
        raise WorkerError("WORKER_IDENTITY_INVALID", f"session {session!r} or generation {generation!r} is not an identifier")
    return session, generation


def _start(token: str | None, args: argparse.Namespace) -> int:
    # Each role imports only what it uses: startup time is part of every generation. First of all,
    # before asyncio is imported: its ssl (OpenSSL, ~6 MiB a worker) loads when a cell uses it.
    from .deferred import defer_ssl

    defer_ssl()
    from .connection import Connection
    from .reaper import set_child_subreaper

    if not token:
        raise WorkerError("WORKER_TOKEN_MISSING", f"{TOKEN_ENV} is not set")
    if args.live_output and args.role != "workbench":
        raise WorkerError("WORKER_LIVE_OUTPUT_UNEXPECTED", "--live-output is only for the workbench role (C16)")
    if args.display and args.role != "workbench":
        raise WorkerError("WORKER_DISPLAY_UNEXPECTED", "--display is only for the workbench role (C20)")
    set_child_subreaper()
    skills = None
    if args.skills:
        from klbr.skill_loader import install_skills

        try:
            skills = install_skills(args.skills)
        except Exception as error:
            code = getattr(error, "code", type(error).__name__)
            raise WorkerError("WORKER_SKILLS_INVALID", f"{args.skills}: {code}: {error}") from None
    hooks = None
    if args.role == "hooks":
        if not args.source:
            raise WorkerError("WORKER_SOURCE_MISSING", "the hooks role needs --source DIR")
        from .hooks_role import load_source

        hooks = load_source(args.source)
    elif args.source:
        raise WorkerError("WORKER_SOURCE_UNEXPECTED", f"--source {args.source!r} is only for the hooks role")
    if args.identity_stdin:
        return _serve_spare(token, args, skills, hooks)
    try:
        conn = Connection.connect(args.socket, args.session, args.generation)
    except OSError as error:
        raise WorkerError("WORKER_CONNECT_FAILED", f"cannot connect to {args.socket!r}: {error}") from None
    worker = _worker(args, conn, hooks)
    return worker.run(_hello(token, args, skills, hooks))


def _serve_spare(token: str, args: argparse.Namespace, skills: str | None, hooks) -> int:
    """A warm spare (C19): everything but the hello done before its identity is known.

    It connects (nothing is sent: the host reads the first envelope only after the bind), makes
    its worker, loop and threads, and only then blocks on the identity line; binding it is then one
    line in and the hello out.
    """
    from .connection import Connection

    try:
        conn = Connection.connect(args.socket, _UNBOUND, _UNBOUND)
    except OSError as error:
        raise WorkerError("WORKER_CONNECT_FAILED", f"cannot connect to {args.socket!r}: {error}") from None
    host_pipe = sys.stdin.buffer  # _worker points sys.stdin at /dev/null for the cells
    worker = _worker(args, conn, hooks)
    worker.prepare()
    # Everything above is the spare's warm part; from here on it is one session's worker.
    identity = read_identity(host_pipe)
    if identity is None:
        return 0
    args.session, args.generation = identity
    conn.bind(args.session, args.generation)
    # Nothing a cell runs may read the host's pipe (or keep it open).
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return worker.serve(_hello(token, args, skills, hooks))


#: The identity of a spare's connection until it is bound: never on the wire (the hello is sent after the bind).
_UNBOUND = "spare"


def _worker(args: argparse.Namespace, conn, hooks):
    from .server import Worker

    if args.role == "workbench":
        # input() in a cell gets EOF instead of blocking on a pipe nobody writes.
        sys.stdin = open(os.devnull, encoding="utf-8")
    return Worker(args.role, conn, hooks=hooks, live_output=args.live_output, display=args.display)


def _hello(token: str, args: argparse.Namespace, skills: str | None, hooks) -> dict:
    return {
        "kind": "hello",
        "token": token,
        "role": args.role,
        "revision": hooks.revision if hooks is not None else None,
        "slots": list(hooks.handlers) if hooks is not None else [],
        "skills": skills,
        "runtime_version": __version__,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run a worker; returns the process exit code (the worker's own threads are not waited for)."""
    token = os.environ.pop(TOKEN_ENV, None)
    # SIGINT only ever means "interrupt the running cell"; until the worker serves, it means nothing.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    try:
        if args.token_stdin:
            from .keeper import keep

            return keep(argv, TOKEN_ENV)
        return _start(token, args)
    except WorkerError as error:
        sys.stderr.write(f"klbr.worker: {error}\n")
        return 1
