// What the socket benches (sessions, spare) read of a `klbr serve` tree in /proc: each process's
// RSS and PSS, its open fds, the tree itself, and its workbenches (worker and guard).
import { readdirSync, readFileSync } from "node:fs";

/** One `key: N kB` line of a /proc file, in bytes (0 once the process is gone). */
function procKb(pid: number, file: string, key: string): number {
  try {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB$`, "m").exec(readFileSync(`/proc/${pid}/${file}`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}
export const rss = (pid: number) => procKb(pid, "status", "VmRSS");
export const pss = (pid: number) => procKb(pid, "smaps_rollup", "Pss");

/** utime+stime of a process and of the children it reaped, in seconds (0 once it is gone). */
function statSeconds(pid: number): { own: number; reaped: number } {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = f.slice(f.lastIndexOf(")") + 2).split(" ");
    return { own: (Number(fields[11]) + Number(fields[12])) / 100, reaped: (Number(fields[13]) + Number(fields[14])) / 100 };
  } catch {
    return { own: 0, reaped: 0 };
  }
}

/** CPU seconds of `root` itself, and of its whole tree: every live process below it and every one reaped. */
export function cpuSeconds(root: number): { own: number; tree: number } {
  const own = statSeconds(root).own;
  let total = 0;
  for (const pid of tree(root).keys()) {
    const s = statSeconds(pid);
    total += s.own + s.reaped;
  }
  return { own, tree: total };
}

export function fds(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}

/** The daemon and every process below it (pid and parent), by ppid links in one /proc snapshot. */
export function tree(root: number): Map<number, number> {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(name));
      children.set(ppid, list);
    } catch {
      // gone meanwhile
    }
  }
  const parent = new Map<number, number>([[root, 0]]);
  const queue = [root];
  for (let i = 0; i < queue.length; i++) for (const child of children.get(queue[i]!) ?? []) (parent.set(child, queue[i]!), queue.push(child));
  return parent;
}

/** The workbench workers of a tree (spares included) with their guards (each worker's parent). */
export function workbenches(parent: Map<number, number>): Array<{ worker: number; guard: number }> {
  const out: Array<{ worker: number; guard: number }> = [];
  for (const [pid, ppid] of parent) {
    try {
      // The guard's argv ends with the worker's: the worker is the one that is not the guard script.
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (argv.includes("\0--role\0workbench") && !argv.includes("klbr_guard")) out.push({ worker: pid, guard: ppid });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
