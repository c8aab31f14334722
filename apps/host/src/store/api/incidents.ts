/** Incidents records (store/incidents.ts). */
export interface IncidentsStore {
  /** Record something the host observed that is not a reply to anyone (a worker death, a recovery). */
  recordIncident(kind: string, detail: unknown, atMs: number): Promise<void>;
}
