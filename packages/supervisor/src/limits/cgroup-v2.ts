import { closeSync, mkdirSync, openSync, readSync, writeSync } from "node:fs";
import { groupPids, killGroupPids, readKey, readNumber, readText, removeGroupDir, writeControl } from "./cgroup-files.js";
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
  /** An fd of memory.peak reset at the cell's start (a per-fd reset, Linux 6.12+). */
  #peakFd: number | undefined;
  /** memory.peak when the cell started, on kernels without the per-fd reset. */
  #peakAtStart: number | undefined;

  constructor(dir: string) {
    this.#dir = dir;
    this.joinFiles = [`${dir}/cgroup.procs`];
  }

  cpuMs(): number | undefined {
    const usec = readKey(`${this.#dir}/cpu.stat`, "usage_usec");
    return usec === undefined ? undefined : Math.floor(usec / 1000);
  }

  resetPeak(): void {
    this.#closePeak();
    this.#peakAtStart = undefined;
    const path = `${this.#dir}/memory.peak`;
    try {
      const fd = openSync(path, "r+");
      try {
        writeSync(fd, "reset\n");
        this.#peakFd = fd;
        return;
      } catch {
        closeSync(fd);
      }
    } catch {
      // no memory.peak (Linux < 5.19, or no memory controller): nothing to measure with
    }
    this.#peakAtStart = readNumber(path);
  }

  peakBytes(): number | undefined {
    if (this.#peakFd !== undefined) {
      const buf = Buffer.alloc(32);
      try {
        const n = readSync(this.#peakFd, buf, 0, buf.length, 0);
        const text = buf.subarray(0, n).toString().trim();
        return /^\d+$/.test(text) ? Number(text) : undefined;
      } catch {
        return undefined;
      }
    }
    // Without a reset the file holds the group's peak since it was made: it is this cell's
    // only when the cell raised it.
    const now = readNumber(`${this.#dir}/memory.peak`);
    if (now === undefined || this.#peakAtStart === undefined) return undefined;
    return now > this.#peakAtStart ? now : undefined;
  }

  oomKills(): number | undefined {
    return readKey(`${this.#dir}/memory.events`, "oom_kill");
  }

  forkRefusals(): number | undefined {
    return readKey(`${this.#dir}/pids.events`, "max");
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
    this.#closePeak();
    if (groupPids(this.#dir).length > 0) await this.kill();
    for (let i = 0; i < 50 && !removeGroupDir(this.#dir); i++) await new Promise((r) => setTimeout(r, 10));
  }

  #closePeak(): void {
    if (this.#peakFd === undefined) return;
    try {
      closeSync(this.#peakFd);
    } catch {
      // already closed
    }
    this.#peakFd = undefined;
  }
}
