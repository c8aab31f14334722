import { existsSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, resolve } from "node:path";
import type { WorkerSandbox } from "@klbr/supervisor";
import { execa } from "execa";
import { HostError } from "../errors";
import { bwrapArgv, isWithin, type BwrapPolicy } from "./bwrap-argv";
import { findProgram } from "./find-program";
import type { SandboxSettings, SandboxView } from "./settings";

/** The host paths a sandbox policy is made from. */
export interface SandboxPaths {
  workspace: string;
  dataDir: string;
  controlSocket: string;
  /** The Python `klbr` runtime: shown read-only. */
  pythonDir: string;
  /** The interpreter (a bare name is found on PATH, which `/` shows). */
  python: string;
}

/** How long the start-up check may take before bwrap counts as unable to start. */
const PROBE_TIMEOUT_MS = 15_000;

/** A path and its resolved form when that differs (a mount on either must cover the other). */
function bothForms(path: string): string[] {
  try {
    const real = realpathSync(path);
    return real === path ? [path] : [path, real];
  } catch {
    return [path];
  }
}

/**
 * One host's sandbox: the bwrap policy its workers and `workspace.run` commands get (the same
 * for all of them: `/` read-only, the workspace read-write, a fresh /tmp, the data directory and
 * control socket hidden, own pid namespace, network as configured), and the start-up check.
 */
export class HostSandbox {
  /** bwrap, found on the host's PATH once: a command's own PATH never decides which program isolates it. */
  private readonly bwrap: string;

  constructor(
    readonly settings: SandboxSettings,
    private readonly paths: SandboxPaths,
  ) {
    this.bwrap = findProgram(settings.bwrap, process.env.PATH, process.cwd()) ?? settings.bwrap;
    if (settings.mode === "bwrap") {
      const data = bothForms(paths.dataDir);
      if (bothForms(paths.workspace).some((w) => data.some((d) => isWithin(w, d)))) {
        throw new HostError(
          "SANDBOX_INVALID",
          `the workspace ${JSON.stringify(paths.workspace)} lies inside the data directory ${JSON.stringify(paths.dataDir)}, which the sandbox hides: choose a workspace outside it`,
        );
      }
      // The mask over the data directory is on its path: a cell could rename a parent inside the
      // writable workspace and reach the database and the control socket under the new name.
      const workspace = bothForms(paths.workspace);
      if (data.some((d) => workspace.some((w) => isWithin(d, w)))) {
        throw new HostError(
          "SANDBOX_DATA_IN_WORKSPACE",
          `the data directory ${JSON.stringify(paths.dataDir)} lies inside the workspace ${JSON.stringify(paths.workspace)}, which sandboxed cells can write: a cell could move it out from under the sandbox's mask`,
        );
      }
    }
  }

  /** What status and inspect report. */
  describe(): SandboxView {
    return { mode: this.settings.mode, network: this.settings.network };
  }

  /** The policy with what one process needs beyond the base (a release, a private directory). */
  policy(extra: { readOnly?: string[]; readWrite?: string[]; chdir?: string } = {}): BwrapPolicy {
    const { workspace, dataDir, controlSocket, pythonDir, python } = this.paths;
    const hiddenDirs = bothForms(dataDir);
    const freshDirs = [...new Set(["/tmp", ...bothForms(tmpdir())])];
    const readOnly = [...bothForms(pythonDir), ...(extra.readOnly ?? []).flatMap(bothForms)];
    // An interpreter under a hidden or fresh directory (a venv in /tmp) would vanish: show its prefix.
    if (isAbsolute(python)) {
      const real = bothForms(python).at(-1)!;
      if ([...hiddenDirs, ...freshDirs].some((d) => isWithin(real, d))) readOnly.push(dirname(dirname(real)));
    }
    const hiddenFiles = existsSync(controlSocket) && !hiddenDirs.some((d) => isWithin(controlSocket, d)) ? [controlSocket] : [];
    return {
      workspace: bothForms(workspace).at(-1)!,
      freshDirs,
      hiddenDirs,
      hiddenFiles,
      readOnly,
      readWrite: (extra.readWrite ?? []).map((p) => resolve(p)),
      network: this.settings.network,
      ...(this.settings.tmpBytes !== undefined ? { tmpBytes: this.settings.tmpBytes } : {}),
      ...(extra.chdir !== undefined ? { chdir: extra.chdir } : {}),
    };
  }

  /**
   * The supervisor option for one worker (undefined when unsandboxed); `readOnly` adds e.g. its
   * release. bwrap (and so the namespace's init, whose /proc/1/environ the cell can read) is
   * started with the host's own minimal environment, nothing of the daemon's and none of the
   * worker's: the worker's (passed names, token) is handed to it inside (envHandoff).
   */
  worker(readOnly: string[] = []): WorkerSandbox | undefined {
    if (this.settings.mode !== "bwrap") return undefined;
    return {
      prefix: (privateDir) => bwrapArgv(this.bwrap, this.policy({ readOnly, readWrite: [privateDir] })),
      pidNamespace: true,
      envHandoff: "bwrap",
    };
  }

  /** The argv a `workspace.run` command starting in `cwd` is put behind (empty when unsandboxed). */
  commandPrefix(cwd?: string): string[] {
    return this.settings.mode === "bwrap" ? bwrapArgv(this.bwrap, this.policy(cwd !== undefined ? { chdir: cwd } : {})) : [];
  }

  /**
   * Start `true` under the same policy once. bwrap missing, or unable to make its namespaces
   * (user namespaces disabled), is SANDBOX_UNAVAILABLE with how to fix it: a host asked for a
   * sandbox never runs without one.
   */
  async check(): Promise<void> {
    if (this.settings.mode !== "bwrap") return;
    const [file, ...args] = [...this.commandPrefix(), "true"];
    const result = await execa(file!, args, { reject: false, stdin: "ignore", timeout: PROBE_TIMEOUT_MS, extendEnv: false, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
    if (result.exitCode === 0) return;
    const how = "or start the host with --sandbox none (KLBR_SANDBOX=none) to run workers unsandboxed";
    if ((result as { code?: string }).code === "ENOENT" || /ENOENT/.test(result.message ?? "")) {
      throw new HostError(
        "SANDBOX_UNAVAILABLE",
        `bwrap was asked for (--sandbox bwrap) but ${JSON.stringify(file)} is not installed: install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) or point KLBR_BWRAP at it, ${how}`,
      );
    }
    const said = String(result.stderr ?? "").trim() || (result.timedOut ? `no answer within ${PROBE_TIMEOUT_MS} ms` : result.shortMessage ?? "no message");
    throw new HostError(
      "SANDBOX_UNAVAILABLE",
      `bwrap was asked for (--sandbox bwrap) but could not start a sandbox (exit ${String(result.exitCode ?? result.signal)}): ${said}. ` +
        `Unprivileged user namespaces are probably disabled: enable them (sysctl kernel.unprivileged_userns_clone=1 on Debian, ` +
        `user.max_user_namespaces > 0, kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu 24.04, or allow them in the container runtime), ${how}`,
    );
  }
}
