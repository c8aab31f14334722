import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { newId } from "../ids";

/** The file in a data directory that keeps its host's id across restarts. */
export const HOST_ID_FILE = "host-id";

const VALID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * This host's `host_id` (C21): made once per data directory and kept there, so a host restarted
 * on the same directory is the same host. The data directory's host lock proves the earlier
 * process is gone, which is what lets a restart take its own leases back at once instead of
 * waiting for them to expire.
 */
export function hostIdOf(dataDir: string): string {
  const file = join(dataDir, HOST_ID_FILE);
  try {
    const id = readFileSync(file, "utf8").trim();
    if (VALID.test(id)) return id;
  } catch {
    /* none yet: made below */
  }
  const id = newId("host");
  writeFileSync(file, `${id}\n`, { mode: 0o600 });
  return id;
}
