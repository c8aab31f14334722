import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { killTagged, minimalEnv, sweepPrivateDirs } from "@klbr/supervisor";

/**
 * Every process a host starts (workers, workspace.run commands) carries this variable, with one
 * value per host run, recorded in the data directory: the next host on that directory kills what
 * a host that died without cleaning up (kill -9) left running, whatever its parent or session.
 */
export const HOST_TREE_ENV = "KLBR_HOST_TREE";

/** The file under the data directory holding the running host's tag value. */
export const HOST_TREE_FILE = "host-tree";

const VALUE = /^[0-9a-f]{32}$/;

/** What a start swept: processes of the previous host run still alive, and temp dirs of dead hosts. */
export interface Swept {
  /** This host run's tag value, already recorded. */
  tag: string;
  /** Pids that still carried the previous run's tag after the sweep (normally none). */
  survivors: number[];
  /** Private temp directories of dead hosts that were removed. */
  dirs: string[];
}

/**
 * Run once the host lock is held (so the previous host of this data directory is gone): kill
 * every process carrying the previous run's tag, remove the `klbr-<pid>-*` temp directories of
 * dead hosts, and record a fresh tag for this run.
 */
export async function sweepLeftovers(dataDir: string): Promise<Swept> {
  const file = join(dataDir, HOST_TREE_FILE);
  let previous = "";
  try {
    previous = readFileSync(file, "utf8").trim();
  } catch {
    // first start on this data directory
  }
  const survivors = VALUE.test(previous) ? await killTagged({ name: HOST_TREE_ENV, value: previous }) : [];
  const dirs = await sweepPrivateDirs();
  const tag = randomBytes(16).toString("hex");
  writeFileSync(file, `${tag}\n`, { mode: 0o600 });
  return { tag, survivors, dirs };
}

/** The names of `KLBR_PASS_ENV` (comma-separated) and `--pass-env`, deduplicated. */
export function passEnvNames(explicit: readonly string[] = [], fromEnv: string | undefined = process.env.KLBR_PASS_ENV): string[] {
  const names = [...explicit, ...(fromEnv ?? "").split(",")].map((n) => n.trim()).filter((n) => n.length > 0);
  return [...new Set(names)];
}

/** The environment everything the host starts begins from (C15): minimal base, passed names, the host's tag. */
export function hostBaseEnv(passEnv: readonly string[], tag: string): Record<string, string> {
  return { ...minimalEnv(passEnv), [HOST_TREE_ENV]: tag };
}
