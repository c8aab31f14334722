import type { SessionFence, Store } from "../../store/api";
import type { LeaseStore } from "../../store/leases";
import type { TurnHost } from "../session";
import type { Turns } from "../turns";
import type { Wakes } from "../wakes";
import type { Workbenches } from "../workbenches";
import { hostIdOf } from "./identity";
import { HostLeasing, type LeaseLog } from "./leasing";

export type { HostLeasing };

/** What the leasing is built from: the host's log, services and options. */
export interface LeasingHost {
  /** The log's lease store (SQLite or PostgreSQL, as the records). */
  readonly log: { readonly leases: LeaseStore<unknown> };
  readonly dataDir: string;
  readonly layout: { controlSocket: string };
  readonly store: Pick<Store, "recoverAfterCrash" | "openWaits" | "recoverSession">;
  readonly workbenches: Workbenches;
  readonly wakes: Wakes;
  readonly turns: Turns | null;
  now(): number;
}

/** The default log of a host that was given none: one line on stderr. */
const stderrLog: LeaseLog = (_level, _event, _fields, text) => void process.stderr.write(`klbr: ${text}\n`);

/** The host's C21 leasing when it runs with leases (`klbr serve`, `--lease`), else null. */
export function leasingOf(host: LeasingHost, options: { leaseMs?: number; log?: LeaseLog }): HostLeasing | null {
  if (options.leaseMs === undefined) return null;
  const leasing = new HostLeasing({
    store: host.log.leases,
    records: host.store,
    hostId: hostIdOf(host.dataDir),
    address: host.layout.controlSocket,
    leaseMs: options.leaseMs,
    now: () => host.now(),
    log: options.log ?? stderrLog,
    workbench: (sessionId) => host.workbenches.get(sessionId),
    markEnded: (sessionId, reason) => host.workbenches.markEnded(sessionId, reason),
    resumeWork: (sessionId) => {
      host.wakes.restoreSession(sessionId);
      host.turns?.kick(sessionId);
    },
  });
  return leasing;
}

/**
 * The turn host one session's turns see under leases: stopping, and its route calls aborted, also
 * once this host lost the session, so a turn ends there and records nothing more (C21).
 */
export function sessionTurnHost(base: TurnHost, leasing: HostLeasing, sessionId: string): TurnHost {
  return Object.create(base, {
    stopping: { get: () => base.stopping || leasing.lost(sessionId) },
    signal: { get: () => AbortSignal.any([base.signal, leasing.signalFor(sessionId)]) },
  }) as TurnHost;
}

/** The fence the host's store writes under: the key of the lease this host holds (or lost) for the session; null without leases. */
export function leaseFence(host: { readonly leasing: HostLeasing | null }): SessionFence {
  return { keyFor: (sessionId) => host.leasing?.leases.keyFor(sessionId) ?? null };
}

/**
 * The store as the host's services use it: a LEASE_LOST from any of its writes stops that session
 * on this host at once (C21), whichever service made the write; the caller gets the error as before.
 */
export function storeWithLeases<S extends Store>(store: S, host: { readonly leasing: HostLeasing | null }): S {
  return new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (result instanceof Promise) return result.catch((error: unknown) => (host.leasing?.writeFailed(error), Promise.reject(error)));
        return result;
      };
    },
  });
}

/**
 * The start's recovery with leases: register and start renewing, then recover the whole log only
 * when no other host is alive on it (otherwise each session is recovered when it is claimed), and
 * set the wait timers again. Returns whether the whole log was recovered.
 */
export async function startWithLeases(host: LeasingHost & { readonly leasing: HostLeasing | null }): Promise<boolean> {
  await host.leasing?.start();
  const whole = !host.leasing || !(await host.leasing.othersAlive());
  await host.wakes.restore(whole ? (await host.store.recoverAfterCrash(host.now())).openWaits : await host.store.openWaits());
  return whole;
}
