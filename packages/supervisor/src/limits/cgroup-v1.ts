import { mkdirSync } from "node:fs";
import { ControlFile, killGroupPids, readText, removeGroupDir, writeControl } from "./cgroup-files.js";
import { V1_CONTROLLERS, type V1Controller } from "./discover.js";
import type { WorkerGroup } from "./group.js";
import type { ResourceLimits } from "./spec.js";

/**
 * cgroup v1 (controllers mounted as separate hierarchies, as on this CI machine): one directory
 * per hierarchy (`memory`, `pids`, `cpuacct`) for each worker, below the host's own directory in
 * that hierarchy. v1 has no cgroup.kill and no per-fd peak reset: processes are killed one by one,
 * and `memory.max_usage_in_bytes` is reset by writing 0 (one cell at a time per worker, so the
 * global reset is exact).
 */

/** The v1 hierarchies a set of limits needs. */
export function v1Needs(limits: ResourceLimits): V1Controller[] {
  const needs: V1Controller[] = [];
  if (limits.memoryBytes !== undefined) needs.push("memory");
  if (limits.procs !== undefined) needs.push("pids");
  if (limits.cpuMs !== undefined) needs.push("cpuacct");
  return needs;
}

export class V1Parent {
  /** `klbr-<pid>` in each hierarchy used (the needed ones, plus memory and cpuacct for accounting). */
  readonly dirs: Partial<Record<V1Controller, string>>;

  private constructor(dirs: Partial<Record<V1Controller, string>>) {
    this.dirs = dirs;
  }

  /** Make `klbr-<pid>` below the host's own group in each hierarchy used. Throws why not. */
  static create(own: Partial<Record<V1Controller, string>>, limits: ResourceLimits, pid = process.pid): V1Parent {
    const missing = v1Needs(limits).filter((c) => own[c] === undefined);
    if (missing.length > 0) throw new Error(`no v1 ${missing.join(", ")} hierarchy is mounted`);
    const dirs: Partial<Record<V1Controller, string>> = {};
    try {
      for (const controller of V1_CONTROLLERS) {
        const base = own[controller];
        if (base === undefined) continue;
        const dir = `${base}/klbr-${pid}`;
        try {
          mkdirSync(dir, { recursive: true });
        } catch (err) {
          // An accounting-only hierarchy that cannot be used is left out; a needed one is fatal.
          if (v1Needs(limits).includes(controller)) throw err;
          continue;
        }
        dirs[controller] = dir;
      }
    } catch (err) {
      for (const dir of Object.values(dirs)) removeGroupDir(dir);
      throw new Error(`cannot make a v1 group: ${(err as Error).message}`);
    }
    return new V1Parent(dirs);
  }

  group(name: string, limits: ResourceLimits): V1Group {
    const dirs: Partial<Record<V1Controller, string>> = {};
    try {
      for (const [controller, parent] of Object.entries(this.dirs) as Array<[V1Controller, string]>) {
        const dir = `${parent}/${name}`;
        mkdirSync(dir);
        dirs[controller] = dir;
      }
      if (limits.memoryBytes !== undefined) {
        writeControl(`${dirs.memory}/memory.limit_in_bytes`, String(limits.memoryBytes));
        // With swap accounting, memory+swap gets the same bound: the tree cannot swap around it.
        if (readText(`${dirs.memory}/memory.memsw.limit_in_bytes`) !== undefined) {
          writeControl(`${dirs.memory}/memory.memsw.limit_in_bytes`, String(limits.memoryBytes));
        }
      }
      if (limits.procs !== undefined) writeControl(`${dirs.pids}/pids.max`, String(limits.procs));
    } catch (err) {
      for (const dir of Object.values(dirs)) removeGroupDir(dir);
      throw err;
    }
    return new V1Group(dirs);
  }

  async close(): Promise<void> {
    for (const dir of Object.values(this.dirs)) {
      await killGroupPids(dir);
      removeGroupDir(dir);
    }
  }
}

class V1Group implements WorkerGroup {
  readonly kind = "cgroup1" as const;
  readonly joinFiles: readonly string[];
  readonly #dirs: Partial<Record<V1Controller, string>>;
  readonly #cpu: ControlFile | undefined;
  readonly #peak: ControlFile | undefined;
  readonly #oom: ControlFile | undefined;
  readonly #pids: ControlFile | undefined;

  constructor(dirs: Partial<Record<V1Controller, string>>) {
    this.#dirs = dirs;
    this.joinFiles = Object.values(dirs).map((dir) => `${dir}/cgroup.procs`);
    const file = (dir: string | undefined, name: string) => (dir === undefined ? undefined : new ControlFile(`${dir}/${name}`));
    this.#cpu = file(dirs.cpuacct, "cpuacct.usage");
    // Reset by writing 0: one cell at a time per worker, so the global reset is exact.
    this.#peak = file(dirs.memory, "memory.max_usage_in_bytes");
    // `oom_kill` in memory.oom_control: Linux 4.13+.
    this.#oom = file(dirs.memory, "memory.oom_control");
    this.#pids = file(dirs.pids, "pids.events");
  }

  cpuMs(): number | undefined {
    const ns = this.#cpu?.number();
    return ns === undefined ? undefined : Math.floor(ns / 1e6);
  }

  resetPeak(): void {
    this.#peak?.write("0");
  }

  peakBytes(): number | undefined {
    return this.#peak?.number();
  }

  oomKills(): number | undefined {
    return this.#oom?.key("oom_kill");
  }

  forkRefusals(): number | undefined {
    return this.#pids?.key("max");
  }

  async kill(): Promise<void> {
    // Any hierarchy lists every member: the first one is enough.
    const dir = Object.values(this.#dirs)[0];
    if (dir !== undefined) await killGroupPids(dir);
  }

  async remove(): Promise<void> {
    for (const f of [this.#cpu, this.#peak, this.#oom, this.#pids]) f?.close();
    await this.kill();
    for (const dir of Object.values(this.#dirs)) {
      for (let i = 0; i < 50 && !removeGroupDir(dir); i++) await new Promise((r) => setTimeout(r, 10));
    }
  }
}
