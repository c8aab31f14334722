import { readFileSync } from "node:fs";
import { join, relative } from "node:path";

/**
 * Where this process sits in the cgroup hierarchies, from /proc/self/cgroup and
 * /proc/self/mountinfo. The texts are parsed by pure functions; only {@link findCgroups} reads.
 */

/** The v1 controllers klbr uses: memory (limit, peak, OOM kills), pids (limit, refusals), cpuacct (CPU time). */
export const V1_CONTROLLERS = ["memory", "pids", "cpuacct"] as const;
export type V1Controller = (typeof V1_CONTROLLERS)[number];

/** The host's own cgroup directories: the v2 one (when v2 is mounted) and one per v1 controller mounted. */
export interface CgroupPlaces {
  /** The host's own directory in the unified (v2) tree. */
  v2?: string;
  /** The host's own directory in each v1 hierarchy klbr uses that is mounted. */
  v1: Partial<Record<V1Controller, string>>;
}

interface ProcCgroupLine {
  controllers: string[];
  path: string;
}

/** `/proc/<pid>/cgroup`: `hierarchy-id:controllers:path` per line (`0::path` is the unified tree). */
export function parseProcCgroup(text: string): ProcCgroupLine[] {
  const lines: ProcCgroupLine[] = [];
  for (const line of text.split("\n")) {
    const first = line.indexOf(":");
    const second = line.indexOf(":", first + 1);
    if (first < 0 || second < 0) continue;
    const controllers = line.slice(first + 1, second);
    lines.push({ controllers: controllers === "" ? [] : controllers.split(","), path: line.slice(second + 1) });
  }
  return lines;
}

interface CgroupMount {
  /** The directory of the hierarchy mounted here (not always its root inside a container). */
  root: string;
  mountPoint: string;
  version: 1 | 2;
  /** v1: the controllers of this hierarchy (from the super options). */
  controllers: string[];
}

/** The cgroup and cgroup2 mounts of `/proc/<pid>/mountinfo` (octal escapes in paths decoded). */
export function parseMountinfo(text: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of text.split("\n")) {
    const dash = line.indexOf(" - ");
    if (dash < 0) continue;
    const before = line.slice(0, dash).split(" ");
    const after = line.slice(dash + 3).split(" ");
    const fstype = after[0];
    if (fstype !== "cgroup" && fstype !== "cgroup2") continue;
    const root = unescapeMount(before[3] ?? "/");
    const mountPoint = unescapeMount(before[4] ?? "");
    const options = (after[2] ?? "").split(",");
    mounts.push({ root, mountPoint, version: fstype === "cgroup2" ? 2 : 1, controllers: fstype === "cgroup" ? options : [] });
  }
  return mounts;
}

function unescapeMount(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** The directory of cgroup `path` under `mount`, or undefined when the mount does not show it. */
function placeOf(mount: CgroupMount, path: string): string | undefined {
  const rel = relative(mount.root, path);
  if (rel.startsWith("..")) return undefined;
  return join(mount.mountPoint, rel);
}

/** Combine the two texts: the host's own directory in the unified tree and in each v1 hierarchy klbr uses. */
export function cgroupPlaces(procCgroup: string, mountinfo: string): CgroupPlaces {
  const lines = parseProcCgroup(procCgroup);
  const mounts = parseMountinfo(mountinfo);
  const places: CgroupPlaces = { v1: {} };
  const unified = lines.find((l) => l.controllers.length === 0 && !l.path.startsWith("name="));
  const v2Mount = mounts.find((m) => m.version === 2);
  if (unified && v2Mount) places.v2 = placeOf(v2Mount, unified.path);
  for (const controller of V1_CONTROLLERS) {
    const line = lines.find((l) => l.controllers.includes(controller));
    const mount = mounts.find((m) => m.version === 1 && m.controllers.includes(controller));
    if (!line || !mount) continue;
    const dir = placeOf(mount, line.path);
    if (dir) places.v1[controller] = dir;
  }
  return places;
}

/** This process's cgroup places (empty when /proc cannot be read). */
export function findCgroups(): CgroupPlaces {
  try {
    return cgroupPlaces(readFileSync("/proc/self/cgroup", "utf8"), readFileSync("/proc/self/mountinfo", "utf8"));
  } catch {
    return { v1: {} };
  }
}
