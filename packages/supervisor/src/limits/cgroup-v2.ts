import { mkdirSync } from "node:fs";
import { ControlFile, groupPids, killGroupPids, readText, removeGroupDir, writeControl } from "./cgroup-files.js";
import type { WorkerGroup } from "./group.js";
import type { ResourceLimits } from "./spec.js";

/**
 * cgroup v2. The host's own cgroup (a `systemd-run --user --scope` gives a delegated one) cannot
 * both hold processes and hand controllers to children (the "no internal processes" rule), so
 * when enabling them there fails with EBUSY and the host is that group's only process, the host
 * moves itself into a `klbr-host` leaf first. Worker groups live in `klbr-<host pid>/` beside it.
 */

/** The controllers a set of limits needs in v2 (CPU time is read from `cpu.stat`, always present). */
export function v2Needs(limits: ResourceLimits): string[] {
  const needs: string[] = [];
  if (limits.memoryBytes !== undefined) needs.push("memory");
  if (limits.procs !== undefined) needs.push("pids");
  return needs;
}

/** The parent of this host's worker groups in the unified tree. */
export class V2Parent {
  readonly dir: string;
  readonly controllers: string[];

  private constructor(dir: string, controllers: string[]) {
    this.dir = dir;
    this.controllers = controllers;
  }

  /** Make `<own>/klbr-<pid>` with the needed controllers (plus memory for accounting when available). Throws why not. */
  static create(own: string, limits: ResourceLimits, pid = process.pid): V2Parent {
    const available = (readText(`${own}/cgroup.controllers`) ?? "").trim().split(/\s+/).filter(Boolean);
    const needs = v2Needs(limits);
    const missing = needs.filter((c) => !available.includes(c));
    if (missing.length > 0) {
      throw new Error(`the v2 group ${own} does not offer the ${missing.join(", ")} controller${missing.length > 1 ? "s" : ""} (it offers: ${available.join(" ") || "none"})`);
    }
    const wanted = [...needs, ...(available.includes("memory") && !needs.includes("memory") ? ["memory"] : [])];
    if (wanted.length > 0) enableIn(own, wanted, pid);
    const dir = `${own}/klbr-${pid}`;
    mkdirSync(dir, { recursive: true });
    if (wanted.length > 0) writeControl(`${dir}/cgroup.subtree_control`, wanted.map((c) => `+${c}`).join(" "));
    return new V2Parent(dir, wanted);
  }

  /** A group for one worker or command, with the limits written. */
  group(name: string, limits: ResourceLimits): V2Group {
    const dir = `${this.dir}/${name}`;
    mkdirSync(dir);
    try {
      if (limits.memoryBytes !== undefined) {
        writeControl(`${dir}/memory.max`, String(limits.memoryBytes));
        // Without this the kernel would swap the tree out instead of stopping it at the limit.
        if (readText(`${dir}/memory.swap.max`) !== undefined) writeControl(`${dir}/memory.swap.max`, "0");
      }
      if (limits.procs !== undefined) writeControl(`${dir}/pids.max`, String(limits.procs));
    } catch (err) {
      removeGroupDir(dir);
      throw err;
    }
    return new V2Group(dir);
  }

  /** Remove the parent and whatever group is left in it (their processes killed first). */
  async close(): Promise<void> {
    try {
      writeControl(`${this.dir}/cgroup.kill`, "1");
    } catch {
      // cgroup.kill needs Linux 5.14: the tree kills already took the processes.
    }
    await killGroupPids(this.dir);
    removeGroupDir(this.dir);
  }
}

/** Enable `controllers` for the children of `own`, moving the host into a leaf when it must. */
function enableIn(own: string, controllers: string[], pid: number): void {
  const line = controllers.map((c) => `+${c}`).join(" ");
  try {
    writeControl(`${own}/cgroup.subtree_control`, line);
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EBUSY") throw err;
  }
  const members = groupPids(own);
  if (members.some((p) => p !== pid)) {
    throw new Error(`the v2 group ${own} holds other processes (${members.filter((p) => p !== pid).slice(0, 5).join(", ")}): start the host in a group of its own, e.g. systemd-run --user --scope`);
  }
  const leaf = `${own}/klbr-host`;
  mkdirSync(leaf, { recursive: true });
  writeControl(`${leaf}/cgroup.procs`, String(pid));
  writeControl(`${own}/cgroup.subtree_control`, line);
}

class V2Group implements WorkerGroup {
  readonly kind = "cgroup2" as const;
  readonly joinFiles: readonly string[];
  readonly #dir: string;
  readonly #cpu: ControlFile;
  /** memory.peak: its per-descriptor reset (Linux 6.12+) is the cell's peak; one descriptor for the generation. */
  readonly #peak: ControlFile;
  readonly #events: ControlFile;
  readonly #pids: ControlFile;
  /** Whether the last reset worked; when not, the peak when the cell started. */
  #resetWorks = false;
  #peakAtStart: number | undefined;

  constructor(dir: string) {
    this.#dir = dir;
    this.joinFiles = [`${dir}/cgroup.procs`];
    this.#cpu = new ControlFile(`${dir}/cpu.stat`);
    this.#peak = new ControlFile(`${dir}/memory.peak`);
    this.#events = new ControlFile(`${dir}/memory.events`);
    this.#pids = new ControlFile(`${dir}/pids.events`);
  }

  cpuMs(): number | undefined {
    const usec = this.#cpu.key("usage_usec");
    return usec === undefined ? undefined : Math.floor(usec / 1000);
  }

  resetPeak(): void {
    this.#resetWorks = this.#peak.write("reset\n");
    this.#peakAtStart = this.#resetWorks ? undefined : this.#peak.number();
  }

  peakBytes(): number | undefined {
    const now = this.#peak.number();
    if (this.#resetWorks || now === undefined) return now;
    // No reset (Linux < 6.12): the file holds the generation's peak, the cell's only if it raised it.
    return this.#peakAtStart !== undefined && now > this.#peakAtStart ? now : undefined;
  }

  oomKills(): number | undefined {
    return this.#events.key("oom_kill");
  }

  forkRefusals(): number | undefined {
    return this.#pids.key("max");
  }

  async kill(): Promise<void> {
    try {
      writeControl(`${this.#dir}/cgroup.kill`, "1");
    } catch {
      // Linux < 5.14: one by one
    }
    await killGroupPids(this.#dir);
  }

  async remove(): Promise<void> {
    for (const f of [this.#cpu, this.#peak, this.#events, this.#pids]) f.close();
    if (groupPids(this.#dir).length > 0) await this.kill();
    for (let i = 0; i < 50 && !removeGroupDir(this.#dir); i++) await new Promise((r) => setTimeout(r, 10));
  }
}
