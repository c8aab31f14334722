import type { HostDb } from "../db/open";
import { finishExecution, runningExecutions } from "./executions";
import { recordIncident } from "./incidents";
import { closeUnansweredRequests } from "./requests";
import { finishStop, stoppingPeers } from "./peers";
import { recoverRemote } from "./remote";
import { openWaits, supersedeOlderOpenWaits, wakeDueWaits, type WaitRow } from "./waits";

/** What a start found left over from a host that did not stop cleanly. */
export interface Recovery {
  interrupted: string[];
  woken: WaitRow[];
  /** Peers whose drain the crash cut short: their workbench is gone, so they are stopped now. */
  stopped: string[];
  openWaits: WaitRow[];
}

/**
 * After a crash: executions left running are closed as interrupted from the host's own
 * observation (no worker outlives its host, so none of them can still be running), and waits
 * whose deadline passed are woken. Open waits with a future deadline get timers again.
 */
export function recoverAfterCrash(db: HostDb, nowMs: number): Recovery {
  // One transaction: a crash during recovery leaves either nothing or all of it (with its incident).
  return db.transaction((tx) => recover(tx as unknown as HostDb, nowMs), { behavior: "immediate" });
}

function recover(db: HostDb, nowMs: number): Recovery {
  const interrupted: string[] = [];
  for (const row of runningExecutions(db)) {
    finishExecution(db, row.id, {
      status: "interrupted",
      endedBy: "host_restart",
      error: "the host stopped while this cell was running; its worker and namespace are gone",
      failure: { reason: "host_died", observed_at_ms: nowMs },
      endedAtMs: nowMs,
    });
    interrupted.push(row.id);
  }
  const woken = wakeDueWaits(db, nowMs);
  const unanswered = closeUnansweredRequests(db, nowMs);
  // At most one open wait per session (C8), also in a log written before waits were superseded.
  const superseded = supersedeOlderOpenWaits(db, nowMs);
  // Their pending requests were cancelled when the stop was asked for, in that same transaction.
  const stopped = stoppingPeers(db).map((peer) => (finishStop(db, peer.id, "host_restart", nowMs), peer.id));
  // Remote generations died with the host's ssh processes (their keepers kill the remote trees).
  const remote = recoverRemote(db, nowMs);
  const remoteCut = remote.generations + remote.operations > 0;
  if (interrupted.length > 0 || woken.length > 0 || stopped.length > 0 || superseded.length > 0 || unanswered.length > 0 || remoteCut) {
    recordIncident(
      db,
      "host.recovered",
      {
        interrupted,
        woken: woken.map((w) => w.id),
        ...(stopped.length > 0 ? { stopped_peers: stopped } : {}),
        ...(superseded.length > 0 ? { superseded_waits: superseded.map((w) => w.id) } : {}),
        ...(unanswered.length > 0 ? { unanswered_requests: unanswered } : {}),
        ...(remoteCut ? { remote } : {}),
      },
      nowMs,
    );
  }
  return { interrupted, woken, stopped, openWaits: openWaits(db) };
}
