import { existsSync } from "node:fs";
import { join } from "node:path";
import type { ActiveRevision } from "@klbr/activation";
import type { AsyncActivationStore } from "../store/activation/api";
import { materialiseRelease } from "../store/activation/materialise";

/**
 * Where this host runs the active revision from: `<releasesDir>/<digest>`, made from the database
 * (C21) when this host did not build it, since the path the activating host recorded is in its own
 * data directory. A revision activated before releases were stored in the database (a log older
 * than that, on SQLite) is not there: its recorded path is used if this machine has it, as before.
 */
export async function localRelease(store: Pick<AsyncActivationStore, "getRelease">, active: Pick<ActiveRevision, "digest" | "path">, releasesDir: string): Promise<string> {
  const own = join(releasesDir, active.digest);
  if (existsSync(own)) return own;
  try {
    return (await materialiseRelease(store, active.digest, releasesDir)).path;
  } catch (error) {
    if ((error as { code?: unknown }).code === "RELEASE_NOT_FOUND" && existsSync(active.path)) return active.path;
    throw error;
  }
}
