import type { HostDb } from "../db/open";
import { incidents } from "../db/schema";

/** Record something the host observed that is not a reply to anyone (a worker death, a recovery). */
export function recordIncident(db: HostDb, kind: string, detail: unknown, atMs: number): void {
  db.insert(incidents).values({ kind, detail, atMs }).run();
}
