import { closeSync, openSync, readFileSync, readSync, readdirSync, rmdirSync, writeFileSync, writeSync } from "node:fs";

/** Small synchronous helpers over cgroup control files: each is one tiny read or write. */

/** The file's text, or undefined when it cannot be read (absent on this kernel, group gone). */
export function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** A single-number file (`memory.peak`, `cpuacct.usage`, ...); undefined when absent or `max`. */
export function readNumber(path: string): number | undefined {
  const text = readText(path)?.trim();
  if (text === undefined || !/^\d+$/.test(text)) return undefined;
  return Number(text);
}

/** One key of a flat-keyed file (`memory.events`, `pids.events`, `cpu.stat`, v1 `memory.oom_control`). */
export function readKey(path: string, key: string): number | undefined {
  const text = readText(path);
  if (text === undefined) return undefined;
  for (const line of text.split("\n")) {
    const [name, value] = line.trim().split(/\s+/);
    if (name === key && value !== undefined && /^\d+$/.test(value)) return Number(value);
  }
  return undefined;
}

/** Write a control file; throws the kernel's error (EBUSY, EINVAL, EACCES...) with the path in it. */
export function writeControl(path: string, value: string): void {
  try {
    writeFileSync(path, value);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw Object.assign(new Error(`cannot write ${JSON.stringify(value)} to ${path}: ${e.code ?? e.message}`), { code: e.code });
  }
}

/** The pids in a group's `cgroup.procs` (empty when the group is gone). */
export function groupPids(dir: string): number[] {
  const text = readText(`${dir}/cgroup.procs`);
  if (!text) return [];
  return text.split("\n").filter(Boolean).map(Number);
}

/** SIGKILL every process of a group (v1 has no cgroup.kill) until it is empty; true once empty. */
export async function killGroupPids(dir: string, attempts = 100): Promise<boolean> {
  for (let i = 0; i < attempts; i++) {
    const pids = groupPids(dir);
    if (pids.length === 0) return true;
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return groupPids(dir).length === 0;
}

/** Remove a group directory and any child groups below it (empty of processes); false if it stays. */
export function removeGroupDir(dir: string): boolean {
  let entries: string[];
  try {
    entries = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT";
  }
  for (const child of entries) removeGroupDir(`${dir}/${child}`);
  try {
    rmdirSync(dir);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT";
  }
}

/**
 * Remove the `klbr-<pid>` groups below `base` whose host is gone (a host killed with -9 leaves
 * its parent groups behind; their processes died with it): whatever is still in them is killed.
 */
export async function sweepDeadHostGroups(base: string, alive: (pid: number) => boolean): Promise<void> {
  let names: string[];
  try {
    names = readdirSync(base, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return;
  }
  for (const name of names) {
    const m = /^klbr-(\d+)$/.exec(name);
    if (!m || alive(Number(m[1]))) continue;
    const dir = `${base}/${name}`;
    for (const child of readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory())) await killGroupPids(`${dir}/${child.name}`);
    removeGroupDir(dir);
  }
}

/** Whether a process with this pid exists (EPERM: it does, another user's). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * A control file read and written through one open descriptor: each reading is one pread at
 * offset 0 (the kernel regenerates the text), not an open, a read and a close. Per-cell counters
 * are read twice per cell, so this is what keeps accounting off the `1+1` round trip.
 */
export class ControlFile {
  readonly path: string;
  #fd: number | undefined;
  #failed = false;
  readonly #buf = Buffer.alloc(4096);

  constructor(path: string) {
    this.path = path;
  }

  #open(): number | undefined {
    if (this.#fd === undefined && !this.#failed) {
      try {
        this.#fd = openSync(this.path, "r+");
      } catch {
        try {
          this.#fd = openSync(this.path, "r");
        } catch {
          this.#failed = true;
        }
      }
    }
    return this.#fd;
  }

  /** The file's text, or undefined when it cannot be read (absent, the group or process gone). */
  read(): string | undefined {
    const fd = this.#open();
    if (fd === undefined) return undefined;
    try {
      const n = readSync(fd, this.#buf, 0, this.#buf.length, 0);
      return this.#buf.toString("utf8", 0, n);
    } catch {
      return undefined;
    }
  }

  /**
   * The file's bytes, or undefined as {@link read}: a view of this file's own buffer, valid until
   * its next reading. For the per-cell /proc readings, parsed in place without a string.
   */
  readBytes(): Uint8Array | undefined {
    const fd = this.#open();
    if (fd === undefined) return undefined;
    try {
      return this.#buf.subarray(0, readSync(fd, this.#buf, 0, this.#buf.length, 0));
    } catch {
      return undefined;
    }
  }

  /** A single number (`memory.max_usage_in_bytes`, `cpuacct.usage`). */
  number(): number | undefined {
    const text = this.read()?.trim();
    return text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined;
  }

  /** One key of a flat-keyed file. */
  key(key: string): number | undefined {
    const text = this.read();
    if (text === undefined) return undefined;
    const m = new RegExp(`^${key}\\s+(\\d+)$`, "m").exec(text);
    return m ? Number(m[1]) : undefined;
  }

  /** Write through the descriptor; false when it failed. */
  write(value: string): boolean {
    const fd = this.#open();
    if (fd === undefined) return false;
    try {
      writeSync(fd, value, 0);
      return true;
    } catch {
      return false;
    }
  }

  close(): void {
    if (this.#fd !== undefined) {
      try {
        closeSync(this.#fd);
      } catch {
        // already closed
      }
    }
    this.#fd = undefined;
  }
}
