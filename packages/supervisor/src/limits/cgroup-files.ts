import { readFileSync, readdirSync, rmdirSync, writeFileSync } from "node:fs";

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
