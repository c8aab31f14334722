import type { ResourceLimits } from "@klbr/supervisor";
import type { HostTelemetryOptions } from "../telemetry";
import type { SandboxMode } from "../sandbox/settings";
import type { SessionFence } from "../store/api";
import type { PostgresChoice } from "../store/host-log";
import type { DriveOptions } from "./turns";

/** How a host is set up. */
export interface HostOptions {
  /** The data directory: durable log, releases, managed skills, control socket. */
  dataDir: string;
  /** Which lease each session's writes are fenced by (C21); none: every write as one host does it. */
  fence?: SessionFence;
  /** The workspace commands run in; defaults to the current directory. */
  workspace?: string;
  /** The directory holding the Python `klbr` runtime and the default behaviour source. */
  pythonDir?: string;
  /** The Python interpreter; defaults to KLBR_PYTHON or python3's sys.executable. */
  python?: string;
  /** Builtin skills root; defaults to KLBR_SKILLS_DIR or <workspace>/skills. */
  builtinSkillsDir?: string;
  /** Interrupt ladder graces (C7). */
  interruptGraceMs?: number;
  sigintGraceMs?: number;
  /** The host clock, for tests. */
  now?: () => number;
  /** Run every worker and workspace.run command in a bubblewrap sandbox; default KLBR_SANDBOX or none. */
  sandbox?: SandboxMode;
  /** Network inside the sandbox; default KLBR_SANDBOX_NETWORK or on. Off needs sandbox bwrap. */
  network?: boolean;
  /** Drive sessions with a model route (C10): `true` for the default route of `<data>/routes.json`. */
  drive?: DriveOptions | boolean;
  /** Host environment variables workers and commands also get (C15), besides those named in KLBR_PASS_ENV. */
  passEnv?: string[];
  /** Start workbenches with C16 live output (default true; `klbr serve --no-live-output` turns it off). */
  liveOutput?: boolean;
  /** Start workbenches with C20 rich display (default true): cells' displays are stored and listed on their records. */
  display?: boolean;
  /** Warm spare workbenches to keep (C19); default 0 (`klbr serve` keeps 1). */
  spares?: number;
  /** Shut a workbench down after this many ms idle (C19); default never. */
  idleTimeoutMs?: number;
  /** Workbench starts at once (default: two per core); a burst of new sessions queues behind them. */
  startConcurrency?: number;
  /** Where klbr's runtime bytecode is compiled once per version for the workbenches (false: off); default KLBR_BYTECODE_CACHE or ~/.cache/klbr/bytecode. */
  bytecodeCache?: string | false;
  /** Resource limits of every worker and workspace.run tree (C17): parsed, or `--limit` texts; default KLBR_LIMITS. */
  limits?: ResourceLimits | string[];
  /** Force a limits mechanism (`cgroup2`, `cgroup1`, `rlimit`); default KLBR_LIMITS_MECHANISM or auto. */
  limitsMechanism?: string;
  /** Many hosts, one log (C21): hold sessions by leases of this many ms (`klbr serve --lease`, default 10 s); absent: no leases (an embedded host). */
  leaseMs?: number;
  /** The SQLite file of the durable log, when not the data directory's own (several hosts on one file, C21). */
  database?: string;
  /** Keep the records in this PostgreSQL database instead of SQLite (C21: `klbr serve --database`). */
  postgres?: PostgresChoice;
  /** Where the daemon's own lines go (a lost lease is told there, not in the database it may no longer write). */
  log?: (level: "info" | "warn" | "error", event: string, fields: Record<string, unknown>, text: string) => void;
  /** Trace export (C18): settings from the host's environment unless `env` is given; `false` never exports. */
  telemetry?: HostTelemetryOptions | false;
}
