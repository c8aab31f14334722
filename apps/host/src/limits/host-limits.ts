import { execFileSync } from "node:child_process";
import {
  formatLimits,
  hasLimits,
  LimitsUnavailableError,
  MECHANISM_LABELS,
  prepareLimits,
  type LimitsMechanism,
  type ResourceLimits,
} from "@klbr/supervisor";
import { HostError } from "../errors";
import type { LimitSettings } from "./settings";

/** What `klbr status`, `status --json` and `runtime.inspect` say about the limits. */
export interface LimitsView {
  /** The canonical text (`memory=64MiB,cpu=2s`), "" when none is set. */
  limits: string;
  /** `cgroup v2`, `cgroup v1`, `rlimit`, or null when no limit is set. */
  mechanism: string | null;
  /** Where the groups are, or what the rlimits mean. */
  detail: string | null;
}

/** bwrap learnt `--size` (the tmpfs size the tmp limit needs) in 0.6.0. */
const BWRAP_SIZE_SINCE = [0, 6, 0];

/**
 * One host's limits: the mechanism chosen at start (before any worker), the bwrap check for
 * `tmp`, what status reports, and the supervisor's `limits` option for every process it starts.
 */
export class HostLimits {
  private constructor(
    readonly limits: ResourceLimits,
    readonly mechanism: LimitsMechanism | undefined,
  ) {}

  /** Apply the settings or refuse (LIMITS_UNAVAILABLE, exit 69): never a start without them. */
  static prepare(settings: LimitSettings, sandbox: { mode: string; bwrap: string }): HostLimits {
    const { limits } = settings;
    if (limits.tmpBytes !== undefined) checkTmp(sandbox);
    let mechanism: LimitsMechanism | undefined;
    try {
      mechanism = prepareLimits(limits, { mechanism: settings.mechanism });
    } catch (err) {
      if (err instanceof LimitsUnavailableError) throw new HostError("LIMITS_UNAVAILABLE", err.message);
      throw err;
    }
    return new HostLimits(limits, mechanism);
  }

  describe(): LimitsView {
    if (!hasLimits(this.limits)) return { limits: "", mechanism: null, detail: null };
    // tmp alone needs no mechanism of the supervisor: bwrap applies it.
    const kind = this.mechanism ? MECHANISM_LABELS[this.mechanism.kind] : "bwrap";
    const detail = this.mechanism?.detail ?? "the sandbox's /tmp is a tmpfs of that size";
    return { limits: formatLimits(this.limits), mechanism: kind, detail };
  }

  /** Remove the host's parent groups (at stop). */
  async close(): Promise<void> {
    await this.mechanism?.close();
  }
}

/** `tmp` is the sandbox's /tmp: without bwrap >= 0.6 it cannot be applied at all. */
function checkTmp(sandbox: { mode: string; bwrap: string }): void {
  if (sandbox.mode !== "bwrap") {
    throw new HostError("LIMITS_UNAVAILABLE", "tmp limits the sandbox's private /tmp, and there is no sandbox: add --sandbox bwrap, or drop tmp");
  }
  let text = "";
  try {
    text = execFileSync(sandbox.bwrap, ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 10_000 });
  } catch {
    return; // bwrap missing: the sandbox's own check says so (SANDBOX_UNAVAILABLE)
  }
  const version = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(text);
  const parts = version ? [Number(version[1]), Number(version[2]), Number(version[3] ?? 0)] : null;
  if (!parts || compare(parts, BWRAP_SIZE_SINCE) < 0) {
    throw new HostError("LIMITS_UNAVAILABLE", `tmp needs bwrap 0.6 or later (--size), ${sandbox.bwrap} is ${text.trim() || "of unknown version"}: upgrade bubblewrap, or drop tmp`);
  }
}

function compare(a: number[], b: number[]): number {
  for (let i = 0; i < 3; i++) if (a[i]! !== b[i]!) return a[i]! - b[i]!;
  return 0;
}
