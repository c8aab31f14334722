import { V1Parent } from "./cgroup-v1.js";
import { V2Parent } from "./cgroup-v2.js";
import { pidAlive, sweepDeadHostGroups } from "./cgroup-files.js";
import { findCgroups, type CgroupPlaces } from "./discover.js";
import type { WorkerGroup } from "./group.js";
import { formatLimits, hasLimits, type ResourceLimits } from "./spec.js";

/** How the limits are applied: a cgroup of each worker's own (v2 or v1), or rlimits set by the guard. */
export type MechanismKind = "cgroup2" | "cgroup1" | "rlimit";

/** The limits could not be applied by any mechanism: the host refuses to start (C17). */
export class LimitsUnavailableError extends Error {
  override readonly name = "LimitsUnavailableError";
  readonly code = "LIMITS_UNAVAILABLE";
}

/** The rlimits the guard's child sets before it executes the command: `[soft, hard]`. */
export type GuardRlimits = Partial<Record<"AS" | "CPU" | "NPROC" | "FSIZE", [number, number]>>;

/** What the guard is given (`--limits JSON`): the cgroups to join and the rlimits to set. */
export interface GuardLimits {
  join: string[];
  rlimits: GuardRlimits;
}

/** The mechanism in force for one host: makes each worker's group and the guard's part. */
export interface LimitsMechanism {
  readonly limits: ResourceLimits;
  readonly kind: MechanismKind;
  /** Where the groups live, or what the rlimits mean: for `klbr status`. */
  readonly detail: string;
  /** Why the preferred mechanisms were not used (empty when the first one was). */
  readonly skipped: readonly string[];
  /** The group of one worker or command (undefined under rlimit). Throws LIMITS_UNAVAILABLE. */
  createGroup(name: string): WorkerGroup | undefined;
  /** The guard's `--limits` value for a command in `group`. */
  guardLimits(group: WorkerGroup | undefined): GuardLimits;
  /** Remove the host's parent groups (at host stop). */
  close(): Promise<void>;
}

/** Options of {@link prepareLimits}. */
export interface PrepareOptions {
  /** `auto` (the default) tries cgroup v2, then v1, then rlimit; another value forces that one. */
  mechanism?: "auto" | MechanismKind;
  /** The host's cgroup places (default: read from /proc/self). */
  places?: CgroupPlaces;
  /** The host's uid (default: process.getuid()). */
  uid?: number;
}

/** The mechanism names `klbr status` prints. */
export const MECHANISM_LABELS: Record<MechanismKind, string> = { cgroup2: "cgroup v2", cgroup1: "cgroup v1", rlimit: "rlimit" };

/** The rlimits every mechanism leaves to the guard: the file size (cgroups have no such control). */
function fileRlimit(limits: ResourceLimits): GuardRlimits {
  return limits.fileBytes === undefined ? {} : { FSIZE: [limits.fileBytes, limits.fileBytes] };
}

/** The rlimits standing in for the cgroup when there is none. */
export function rlimitsFor(limits: ResourceLimits): GuardRlimits {
  const r: GuardRlimits = fileRlimit(limits);
  if (limits.memoryBytes !== undefined) r.AS = [limits.memoryBytes, limits.memoryBytes];
  if (limits.cpuMs !== undefined) {
    // RLIMIT_CPU counts whole seconds: SIGXCPU at the soft limit, SIGKILL one second later.
    const seconds = Math.ceil(limits.cpuMs / 1000);
    r.CPU = [seconds, seconds + 1];
  }
  if (limits.procs !== undefined) r.NPROC = [limits.procs, limits.procs];
  return r;
}

let groupSeq = 0;

/** A group name unique within this host. */
function groupName(name: string): string {
  return `${name.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 64)}-${++groupSeq}`;
}

function cgroupMechanism(kind: "cgroup2" | "cgroup1", limits: ResourceLimits, parent: V2Parent | V1Parent, where: string): LimitsMechanism {
  return {
    limits,
    kind,
    detail: where,
    skipped: [],
    createGroup(name) {
      try {
        return parent.group(groupName(name), limits);
      } catch (err) {
        throw new LimitsUnavailableError(`cannot make the ${MECHANISM_LABELS[kind]} group for ${name}: ${(err as Error).message}`);
      }
    },
    guardLimits(group) {
      return { join: group ? [...group.joinFiles] : [], rlimits: fileRlimit(limits) };
    },
    close: () => parent.close(),
  };
}

function rlimitMechanism(limits: ResourceLimits, uid: number): LimitsMechanism {
  if (limits.procs !== undefined && uid === 0) {
    throw new Error("RLIMIT_NPROC does not bind uid 0 (the kernel exempts root), so procs cannot be applied");
  }
  const notes = [];
  if (limits.memoryBytes !== undefined) notes.push("memory bounds each process's address space (RLIMIT_AS)");
  if (limits.cpuMs !== undefined) notes.push("cpu bounds each process's CPU time, in whole seconds (RLIMIT_CPU)");
  if (limits.procs !== undefined) notes.push("procs bounds every process of the host's user together (RLIMIT_NPROC)");
  if (limits.fileBytes !== undefined) notes.push("file bounds each file written (RLIMIT_FSIZE)");
  return {
    limits,
    kind: "rlimit",
    detail: notes.join("; "),
    skipped: [],
    createGroup: () => undefined,
    guardLimits: () => ({ join: [], rlimits: rlimitsFor(limits) }),
    close: async () => undefined,
  };
}

/**
 * Choose and set up the mechanism for `limits` (C17): a cgroup below the host's own when it can
 * make one (v2, else v1), else rlimits in the guard. Undefined when no limit is set (or only `tmp`, which bwrap applies). Throws
 * {@link LimitsUnavailableError} naming every reason when no mechanism can apply them all.
 */
export function prepareLimits(limits: ResourceLimits | undefined, opts: PrepareOptions = {}): LimitsMechanism | undefined {
  if (!hasLimits(limits)) return undefined;
  const wanted = opts.mechanism ?? "auto";
  const order: MechanismKind[] = wanted === "auto" ? ["cgroup2", "cgroup1", "rlimit"] : [wanted];
  const places = opts.places ?? (order.some((k) => k !== "rlimit") ? findCgroups() : { v1: {} });
  const reasons: string[] = [];
  // A limit only bwrap applies is the host's check (tmp); the rest must all be applied here.
  const applied: ResourceLimits = { ...limits };
  delete applied.tmpBytes;
  if (!hasLimits(applied)) return undefined;
  for (const kind of order) {
    try {
      const mechanism = build(kind, limits, applied, places, opts.uid ?? process.getuid?.() ?? 0);
      return { ...mechanism, skipped: reasons };
    } catch (err) {
      reasons.push(`${MECHANISM_LABELS[kind]}: ${(err as Error).message}`);
    }
  }
  throw new LimitsUnavailableError(`cannot apply the limits ${formatLimits(limits)}: ${reasons.join("; ")}`);
}

function build(kind: MechanismKind, limits: ResourceLimits, applied: ResourceLimits, places: CgroupPlaces, uid: number): LimitsMechanism {
  if (kind === "rlimit") return rlimitMechanism(limits, uid);
  if (kind === "cgroup2") {
    if (places.v2 === undefined) throw new Error("no cgroup2 filesystem shows the host's group");
    void sweepDeadHostGroups(places.v2, pidAlive);
    const parent = V2Parent.create(places.v2, applied);
    return cgroupMechanism(kind, limits, parent, `${parent.dir} (controllers: ${parent.controllers.join(" ") || "none; cpu.stat"})`);
  }
  for (const base of Object.values(places.v1)) void sweepDeadHostGroups(base, pidAlive);
  const parent = V1Parent.create(places.v1, applied);
  return cgroupMechanism(kind, limits, parent, Object.entries(parent.dirs).map(([c, d]) => `${c} ${d}`).join(", "));
}
