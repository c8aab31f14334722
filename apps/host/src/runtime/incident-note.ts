import type { IncidentsStore } from "../store/api";

/**
 * Record an incident from a callback that cannot wait for it (a worker's death listener, a
 * background build's error hook). The store's write still starts at once (on SQLite it is done
 * before this returns); an incident the log refuses is said on stderr, never an unhandled rejection.
 */
export function noteIncident(store: IncidentsStore, kind: string, detail: unknown, atMs: number): void {
  store.recordIncident(kind, detail, atMs).catch((error: unknown) => {
    process.stderr.write(`klbr: incident ${kind} not recorded: ${String(error)}\n`);
  });
}
