import { EXIT } from "./exit-codes";

/** How a failed command is reported: `klbr: CODE: message`, one hint line, and an exit status. */
export interface Failure {
  code: string;
  message: string;
  hint: string | null;
  exit: number;
}

/** What a hint may name: the command, and the files of the data directory it used. */
export interface FailureContext {
  command?: string;
  dataDir?: string;
  database?: string;
}

type Coded = Error & { code?: unknown; path?: unknown; errno?: unknown };

const NOTHING_RAN = new Set(["HOST_NOT_RUNNING", "HOST_ALREADY_RUNNING", "HOST_STOPPING", "CELL_TOO_LARGE", "SESSION_HELD_ELSEWHERE"]);
const FILE_ERRNOS = new Set(["EEXIST", "EPERM", "EACCES", "ENOTDIR", "EISDIR", "EROFS", "ENOSPC", "ELOOP", "ENAMETOOLONG"]);

function hintFor(code: string, e: Coded, ctx: FailureContext): { hint: string | null; exit: number } {
  const path = typeof e.path === "string" ? e.path : (ctx.dataDir ?? "the data directory");
  const db = ctx.database ?? "the database";
  switch (code) {
    case "CLI_USAGE":
      return { hint: `run \`klbr ${ctx.command ? `${ctx.command} ` : ""}--help\` for usage`, exit: EXIT.USAGE };
    case "WORKSPACE_MISMATCH":
      return { hint: "drop -w to use the daemon's workspace, or stop it and run `klbr serve -w DIR`", exit: EXIT.USAGE };
    case "HOST_NOT_RUNNING":
      return { hint: "start a daemon with `klbr serve` (in another terminal or as a service)", exit: EXIT.NOTHING_RAN };
    case "HOST_ALREADY_RUNNING":
      return { hint: "another klbr command is using this data directory: run `klbr serve` so commands share one host, or wait and retry", exit: EXIT.NOTHING_RAN };
    case "HOST_STOPPING":
      return { hint: "the host is stopping; run the command again once it has stopped", exit: EXIT.NOTHING_RAN };
    case "SESSION_HELD_ELSEWHERE":
      return { hint: "another klbr host holds this session (C21): send the command to that host's data directory, or retry once its lease expires", exit: EXIT.NOTHING_RAN };
    case "CELL_TOO_LARGE":
      return { hint: "split the cell, or put the data in a workspace file and read it from the cell", exit: EXIT.NOTHING_RAN };
    case "DATA_DIR_PERMISSIONS":
      return { hint: `run klbr as the owner of ${ctx.dataDir ?? "the data directory"}, or choose another --data-dir`, exit: EXIT.UNAVAILABLE };
    case "DATABASE_CORRUPT":
    case "SQLITE_NOTADB":
    case "SQLITE_CORRUPT":
      return { hint: `move ${db} aside (klbr init makes a new one), or choose another --data-dir`, exit: EXIT.UNAVAILABLE };
    case "SQLITE_READONLY":
    case "SQLITE_CANTOPEN":
    case "SQLITE_PERM":
      return { hint: `${db} cannot be written: check its permissions and its directory's, or choose another --data-dir`, exit: EXIT.UNAVAILABLE };
    case "DATABASE_URL_INVALID":
      return { hint: "--database (KLBR_DATABASE_URL) is a PostgreSQL URL: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE, or postgres://USER@/DATABASE?host=/run/postgresql for a socket; leave it out for SQLite", exit: EXIT.USAGE };
    case "DATABASE_UNAVAILABLE":
      return { hint: "check that PostgreSQL runs and that the URL's server, user, password and database are right (psql 'URL' -c 'select 1' tries the same)", exit: EXIT.UNAVAILABLE };
    case "SANDBOX_INVALID":
      return { hint: "--sandbox (KLBR_SANDBOX) is none or bwrap; --network (KLBR_SANDBOX_NETWORK) is on or off, and off needs --sandbox bwrap", exit: EXIT.USAGE };
    case "SANDBOX_DATA_IN_WORKSPACE":
      return { hint: "keep the data directory outside the workspace: pass --data-dir DIR (or KLBR_DATA_DIR) elsewhere, or serve another workspace with -w DIR", exit: EXIT.UNAVAILABLE };
    case "LIMITS_INVALID":
      return { hint: "limits are name=value items joined by commas: memory=2GiB,cpu=10m,procs=512,file=1GiB,tmp=512MiB (--limit or KLBR_LIMITS)", exit: EXIT.USAGE };
    case "LIMITS_UNAVAILABLE":
      return { hint: "run the host where it can make a cgroup (as root, or in a delegated one: systemd-run --user --scope klbr serve ...), or drop the limit it names", exit: EXIT.UNAVAILABLE };
    case "SANDBOX_UNAVAILABLE":
      return { hint: "install bubblewrap and allow user namespaces, or run with --sandbox none (unsandboxed)", exit: EXIT.UNAVAILABLE };
    case "WORKER_SPAWN_FAILED":
    case "PYTHON_NOT_FOUND":
      return { hint: "set KLBR_PYTHON to a Python 3.11+ interpreter (or put python3 on PATH)", exit: EXIT.UNAVAILABLE };
    case "WORKER_EXITED_EARLY":
    case "WORKER_HANDSHAKE_TIMEOUT":
      return { hint: "check that KLBR_PYTHON is Python 3.11+ and that KLBR_PYTHON_PATH (when set) holds the klbr package", exit: EXIT.UNAVAILABLE };
    case "DRIVER_KEY_UNSET":
      return { hint: "export the variable the route names in api_key_env (`klbr route list` shows which), then run the command again", exit: EXIT.UNAVAILABLE };
    case "DRIVER_INVALID_ROUTES":
      return { hint: `fix ${ctx.dataDir ? `${ctx.dataDir}/routes.json` : "routes.json"}, or remove it and add routes again with \`klbr route add\``, exit: EXIT.DATA };
    case "DRIVER_UNKNOWN_ROUTE":
      return { hint: "`klbr route list` shows the routes; `klbr route add NAME ...` adds one", exit: EXIT.USAGE };
    case "DRIVER_ROUTE_FAILED":
    case "DRIVER_MALFORMED_REPLY":
      return { hint: "check the route's base_url and model, and that the server answers (`klbr route test NAME`)", exit: EXIT.UNAVAILABLE };
    case "DISPLAY_NOT_FOUND":
      return { hint: "`klbr log` lists each cell's displays with their digests (`klbr log --json` in full)", exit: EXIT.DATA };
    case "DISPLAY_DIGEST_AMBIGUOUS":
      return { hint: "give more of the digest (`klbr log --json` has it in full)", exit: EXIT.DATA };
    case "DISPLAY_WRITE_FAILED":
      return { hint: "check that the directory of -o FILE exists and is writable", exit: EXIT.UNAVAILABLE };
    default:
      break;
  }
  if (FILE_ERRNOS.has(code)) {
    const what = code === "EEXIST" || code === "ENOTDIR" ? "is in the way (a file where a directory is needed?)" : "cannot be used";
    return { hint: `${path} ${what}: fix it, or choose another --data-dir / KLBR_DATA_DIR`, exit: EXIT.UNAVAILABLE };
  }
  if (code.startsWith("SOURCE_") || code.startsWith("MANIFEST_")) return { hint: null, exit: EXIT.DATA };
  if (code.startsWith("REMOTE_")) return remoteHint(code, ctx);
  return { hint: null, exit: EXIT.SOFTWARE };
}

/** Remote targets: a bad targets.json is the operator's data; reaching a target is this machine's environment. */
function remoteHint(code: string, ctx: FailureContext): { hint: string | null; exit: number } {
  const file = `${ctx.dataDir ?? "<data>"}/targets.json`;
  switch (code) {
    case "REMOTE_TARGETS_INVALID":
    case "REMOTE_TARGET_INVALID":
    case "REMOTE_TARGET_EXISTS":
      return { hint: `fix ${file}, or use \`klbr target add|remove\` (--replace overwrites)`, exit: EXIT.DATA };
    case "REMOTE_TARGET_NOT_FOUND":
      return { hint: "`klbr target list` shows the targets; `klbr target add` adds one", exit: EXIT.DATA };
    case "REMOTE_HOST_KEY_MISMATCH":
      return { hint: "the server's host key is not in the target's known_hosts: verify the key out of band, then fix that file", exit: EXIT.UNAVAILABLE };
    case "REMOTE_AUTH_FAILED":
      return { hint: "check the target's user and identity file, and the server's authorized_keys", exit: EXIT.UNAVAILABLE };
    default:
      return { hint: null, exit: EXIT.UNAVAILABLE };
  }
}

/** The codes a user can act on; an error wrapping one (a reply error around a spawn failure) is reported as it. */
const ACTIONABLE = /^(E[A-Z]+|SQLITE_\w+|WORKER_(SPAWN_FAILED|EXITED_EARLY|HANDSHAKE_TIMEOUT)|PYTHON_NOT_FOUND|HOST_\w+|DATA_DIR_PERMISSIONS|DATABASE_CORRUPT|DATABASE_URL_INVALID|DATABASE_UNAVAILABLE|CELL_TOO_LARGE|CLI_USAGE)$/;

/** The error to report: the first in the cause chain whose code is actionable, else the outermost. */
function reported(error: unknown): Coded {
  const outer = (error instanceof Error ? error : new Error(String(error))) as Coded;
  for (let e: unknown = outer, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const code = (e as Coded).code;
    if (typeof code === "string" && ACTIONABLE.test(code)) return e as Coded;
  }
  return outer;
}

/** Turn any thrown value into its report; the code is never repeated inside the message. */
export function describeFailure(error: unknown, ctx: FailureContext = {}): Failure {
  const e = reported(error);
  const code = typeof e.code === "string" && e.code !== "" ? e.code : "KLBR_INTERNAL";
  let message = e.message;
  // Node's errno messages ("EEXIST: file already exists, mkdir '/x'") and some coded errors lead with their code.
  while (message.startsWith(`${code}: `) || message.startsWith(`${code} `)) message = message.slice(code.length + 1).trimStart();
  // One line: multi-line messages (execa's) repeat the first line's cause below it.
  message = message.split("\n")[0]!.trimEnd();
  if (code.startsWith("SQLITE_") && ctx.database && !message.includes(ctx.database)) message += ` (${ctx.database})`;
  const { hint, exit } = hintFor(code, e, ctx);
  return { code, message, hint, exit };
}

/** Write a failure on stderr: one `klbr: CODE: message` line, then the hint line when there is one. */
export function reportFailure(failure: Failure, err: NodeJS.WritableStream = process.stderr): void {
  err.write(`klbr: ${failure.code}: ${failure.message}\n`);
  if (failure.hint) err.write(`hint: ${failure.hint}\n`);
}
