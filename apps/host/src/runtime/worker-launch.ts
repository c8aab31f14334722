import type { LimitsMechanism, StartWorkerOptions } from "@klbr/supervisor";
import type { HostSandbox } from "../sandbox/host-sandbox";
import { hostBaseEnv, HOST_TREE_ENV } from "./leftovers";

/** How this host starts its workers: the interpreter, the runtime, the workspace, the sandbox, the environment. */
export interface LaunchSettings {
  python: string;
  pythonDir: string;
  workspace: string;
  sandbox: HostSandbox;
  /** Host environment variables passed to what the host starts (C15). */
  passEnv: string[];
  /** Interrupt ladder graces (C7), for workbenches. */
  interruptGraceMs?: number;
  sigintGraceMs?: number;
  /** Workbenches (local, sandboxed, remote) are started with C16 live output. */
  liveOutput?: boolean;
  /** Workbenches (local, sandboxed, remote) are started with C20 rich display (`--display`). */
  display?: boolean;
}

/** The options every worker of this host shares, whatever its role. */
export type CommonWorkerOptions = Pick<StartWorkerOptions, "command" | "pythonPath" | "cwd" | "passEnv" | "env" | "limits">;

/** What every worker and command of this host starts from. */
export class WorkerLaunch {
  /** This run's KLBR_HOST_TREE value (see runtime/leftovers.ts), set once the start swept leftovers. */
  hostTree = "";
  /** The C17 limits mechanism, set once the start prepared it (before any worker): every worker gets it. */
  limits: LimitsMechanism | undefined;

  constructor(readonly settings: LaunchSettings) {}

  /** The command, runtime path, working directory and environment every worker shares. */
  common(): CommonWorkerOptions {
    const s = this.settings;
    return {
      command: [s.python, "-B", "-m", "klbr.worker"],
      pythonPath: [s.pythonDir],
      cwd: s.workspace,
      passEnv: s.passEnv,
      env: { [HOST_TREE_ENV]: this.hostTree },
      ...(this.limits ? { limits: this.limits } : {}),
    };
  }

  /** The interrupt ladder graces the host was given (none: the supervisor's defaults). */
  graces(): Pick<StartWorkerOptions, "interruptGraceMs" | "sigintGraceMs"> {
    const s = this.settings;
    return {
      ...(s.interruptGraceMs !== undefined ? { interruptGraceMs: s.interruptGraceMs } : {}),
      ...(s.sigintGraceMs !== undefined ? { sigintGraceMs: s.sigintGraceMs } : {}),
    };
  }

  /** Whether workbenches stream their cells' output (C16): `--live-output` on their argv. */
  live(): Pick<StartWorkerOptions, "liveOutput"> {
    return this.settings.liveOutput ? { liveOutput: true } : {};
  }

  /** Whether workbenches send rich displays (C20): `--display` on their argv. */
  display(): Pick<StartWorkerOptions, "display"> {
    return this.settings.display ? { display: true } : {};
  }

  /** The environment everything the host starts begins from (C15). */
  baseEnv(): Record<string, string> {
    return hostBaseEnv(this.settings.passEnv, this.hostTree);
  }
}
