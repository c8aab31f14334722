import type { LogEntry } from "./log-view";

/**
 * Keeps the log entries of one session. An entry names its session directly (`session_id`), as one
 * side of a peer (`opener_session_id`, `from_session`, `to_session`: a peer request belongs to both
 * of its sessions), or through the execution it belongs to (requests, waits, effects carry only
 * `execution_id`). Executions are learnt from every batch before it is filtered, and remembered
 * for the next ones: an execution's row is written before any of its requests, so a follower has
 * always seen it by then. Remote generations carry only `namespace_id`: namespaces are learnt the
 * same way (a namespace's row is written before its first generation's). Host-wide entries
 * (incidents, activations) belong to no session.
 */
export function sessionFilter(session: string): (entries: LogEntry[]) => LogEntry[] {
  const executions = new Map<string, string>();
  const namespaces = new Map<string, string>();
  return (entries) => {
    for (const e of entries) {
      if (typeof e.id !== "string" || typeof e.session_id !== "string") continue;
      if (e.kind === "execution") executions.set(e.id, e.session_id);
      else if (e.kind === "remote.namespace") namespaces.set(e.id, e.session_id);
    }
    return entries.filter((e) => {
      if (e.session_id === session || e.opener_session_id === session || e.from_session === session || e.to_session === session) return true;
      if (typeof e.namespace_id === "string" && namespaces.get(e.namespace_id) === session) return true;
      return typeof e.execution_id === "string" && executions.get(e.execution_id) === session;
    });
  };
}
