import { randomBytes } from "node:crypto";
import { closeSync, openSync, readdirSync, readSync } from "node:fs";
import { machineScans, readProc, type KnownProcs } from "./tree.js";

/** The environment variable that tags every process of one worker generation. */
export const TREE_ENV = "KLBR_TREE";

/** A process-tree tag: spawn with `env: { [tag.name]: tag.value }`, end with `killTagged(tag)`. */
export interface TreeTag {
  readonly name: string;
  readonly value: string;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const VALUE = /^[0-9a-f]{32}$/;

/** A fresh tag: {@link TREE_ENV} set to 128 random bits in hex. */
export function treeTag(): TreeTag {
  return { name: TREE_ENV, value: randomBytes(16).toString("hex") };
}

/**
 * The `NAME=value` bytes of a tag. Only 32 lowercase hex digits are accepted as a value, so a
 * tag can never be something ordinary processes share (`HOME=/root`).
 */
export function tagEntry(tag: TreeTag): Buffer {
  if (!NAME.test(tag.name) || !VALUE.test(tag.value)) {
    throw new RangeError(`a tree tag is an identifier and 32 lowercase hex digits, got ${JSON.stringify(`${tag.name}=${tag.value}`)}`);
  }
  return Buffer.from(`${tag.name}=${tag.value}`, "latin1");
}

/** True when the NUL-separated `environ` holds exactly `entry` as one whole entry (not inside another). */
export function environHas(environ: Buffer, entry: Buffer): boolean {
  if (entry.length === 0) return false;
  for (let at = environ.indexOf(entry); at >= 0; at = environ.indexOf(entry, at + 1)) {
    const end = at + entry.length;
    if ((at === 0 || environ[at - 1] === 0) && (end === environ.length || environ[end] === 0)) return true;
  }
  return false;
}

let scratch = Buffer.allocUnsafe(64 * 1024);

/** `/proc/<pid>/environ`, or undefined when it cannot be read (gone, EACCES, a kernel thread's is empty). */
function readEnviron(pid: number): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(`/proc/${pid}/environ`, "r");
  } catch {
    return undefined;
  }
  try {
    let length = 0;
    for (;;) {
      if (length === scratch.length) {
        const bigger = Buffer.allocUnsafe(scratch.length * 2);
        scratch.copy(bigger, 0, 0, length);
        scratch = bigger;
      }
      const n = readSync(fd, scratch, length, scratch.length - length, null);
      if (n === 0) return scratch.subarray(0, length);
      length += n;
    }
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function environMatches(pid: number, entries: Buffer[]): boolean {
  const environ = readEnviron(pid);
  return environ !== undefined && entries.some((entry) => environHas(environ, entry));
}

/**
 * Live processes (not this one, not zombies) whose environment holds one of `entries`, each with
 * its start time. The environment is read again after the start time, so a pid that was reused
 * between the two reads is either skipped or recorded with the start time of the tagged process.
 */
export function findTagged(entries: Buffer[]): KnownProcs {
  machineScans.count++;
  const found: KnownProcs = new Map();
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return found;
  }
  for (const name of names) {
    const first = name.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    const pid = Number(name);
    if (pid === process.pid || !environMatches(pid, entries)) continue;
    const proc = readProc(pid);
    if (!proc || proc.state === "Z" || proc.state === "X" || !environMatches(pid, entries)) continue;
    found.set(pid, proc.start);
  }
  return found;
}

/** Send `signal` to `pid` only if it still has start time `start` (a reused pid is never hit). */
export function signalIfSame(pid: number, start: number, signal: NodeJS.Signals): boolean {
  if (readProc(pid)?.start !== start) return false;
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false; // gone meanwhile (ESRCH), or not ours to signal (EPERM)
  }
}

/**
 * One synchronous pass: SIGSTOP every process carrying one of `tags`, rescanning until a scan
 * finds no process it had not stopped (a stopped process cannot fork), then SIGKILL them all.
 * Returns what it signalled, by pid and start time. Unreadable environments are skipped.
 */
export function killTaggedOnce(tags: TreeTag[]): KnownProcs {
  const entries = tags.map(tagEntry);
  const seen: KnownProcs = new Map();
  if (entries.length === 0) return seen;
  for (let scan = 0; scan < 16; scan++) {
    let fresh = 0;
    for (const [pid, start] of findTagged(entries)) {
      if (seen.get(pid) === start) continue;
      seen.set(pid, start);
      fresh += 1;
      signalIfSame(pid, start, "SIGSTOP");
    }
    if (fresh === 0) break;
  }
  for (const [pid, start] of seen) signalIfSame(pid, start, "SIGKILL");
  return seen;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The tags waiting for the next shared scan, and how to tell each whether it found any process. */
let batch: Map<string, Array<(found: boolean) => void>> | null = null;

/**
 * Whether any live process (but this one) carries `entry`, by one scan of /proc shared with every
 * call made in the same turn of the event loop: a host that ends hundreds of workers at once (an
 * idle cull, a stop) reads each process's environment once for all of them, not once per worker.
 * The scan runs after the call, so what it finds is as current as a scan of its own would be.
 */
export function anyTagged(entry: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    if (batch === null) {
      batch = new Map();
      setImmediate(scanBatch);
    }
    const key = entry.toString("latin1");
    const waiting = batch.get(key);
    if (waiting) waiting.push(resolve);
    else batch.set(key, [resolve]);
  });
}

/** Counts of shared scans and of the tags they answered (a test asserts one scan serves many). */
export const sharedScans = { scans: 0, tags: 0 };

function scanBatch(): void {
  const current = batch!;
  batch = null;
  sharedScans.scans += 1;
  sharedScans.tags += current.size;
  // Every tag of the batch by its variable name: an environment is searched once per name, its
  // value looked up in a set, whatever the number of tags.
  const byName = new Map<string, Set<string>>();
  for (const key of current.keys()) {
    const at = key.indexOf("=");
    const name = key.slice(0, at);
    const values = byName.get(name) ?? byName.set(name, new Set()).get(name)!;
    values.add(key.slice(at + 1));
  }
  const found = new Set<string>();
  let names: string[] = [];
  try {
    names = readdirSync("/proc");
  } catch {
    // no /proc: nothing is found, as findTagged says
  }
  for (const name of names) {
    if (found.size === current.size) break;
    const first = name.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    const environ = readEnviron(pid);
    if (environ === undefined) continue;
    const hits: string[] = [];
    for (const [varName, values] of byName) for (const value of valuesOf(environ, varName)) if (values.has(value)) hits.push(`${varName}=${value}`);
    if (hits.length === 0) continue;
    // As findTagged: a zombie carries nothing any more.
    const proc = readProc(pid);
    if (!proc || proc.state === "Z" || proc.state === "X") continue;
    for (const hit of hits) found.add(hit);
  }
  for (const [key, waiting] of current) for (const resolve of waiting) resolve(found.has(key));
}

/** The values of every whole `name=` entry of a NUL-separated environment. */
function valuesOf(environ: Buffer, name: string): string[] {
  const prefix = Buffer.from(`${name}=`, "latin1");
  const out: string[] = [];
  for (let at = environ.indexOf(prefix); at >= 0; at = environ.indexOf(prefix, at + 1)) {
    if (at !== 0 && environ[at - 1] !== 0) continue;
    const start = at + prefix.length;
    const end = environ.indexOf(0, start);
    out.push(environ.toString("latin1", start, end < 0 ? environ.length : end));
  }
  return out;
}

/**
 * Kill every process (but this one) whose environment carries `tag`, whatever its parent, session
 * or group: pass after pass until a scan finds none left (or `timeoutMs` passes). Resolves with
 * the pids still carrying the tag (normally none). A process that built itself a new environment
 * without the tag is out of its reach. The first look is {@link anyTagged}'s shared scan: when the
 * tree is gone already (a worker that was shut down), that one scan, shared, is all it costs.
 */
export async function killTagged(tag: TreeTag, timeoutMs = 5000): Promise<number[]> {
  const entry = tagEntry(tag);
  if (!(await anyTagged(entry))) return [];
  const deadline = Date.now() + timeoutMs;
  let delay = 1;
  for (;;) {
    if (killTaggedOnce([tag]).size === 0) return [];
    if (Date.now() >= deadline) return [...findTagged([entry]).keys()];
    await sleep(delay);
    delay = Math.min(delay * 2, 50);
  }
}
