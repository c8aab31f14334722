import type { IncidentsStore } from "../store/api";
import { hostVersion } from "../version";

/**
 * Record an incident when a worker's hello names another runtime version than the host's: the
 * Python runtime (KLBR_PYTHON_PATH, a pip-installed klbr) and the host were released apart. A
 * hello without the optional field (an older worker) says nothing, so nothing is recorded.
 */
export async function noteRuntimeVersion(store: IncidentsStore, worker: { hello: unknown; generation: string }, where: { role: string; sessionId: string }, atMs: number): Promise<boolean> {
  const reported = (worker.hello as { runtime_version?: unknown }).runtime_version;
  if (typeof reported !== "string" || reported === hostVersion()) return false;
  await store.recordIncident("worker.runtime_version_mismatch", { role: where.role, session_id: where.sessionId, generation: worker.generation, worker_version: reported, host_version: hostVersion() }, atMs);
  return true;
}
