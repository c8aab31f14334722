import { getEffect } from "../store/effects";
import { getEvent } from "../store/events";
import { getExecution } from "../store/executions";
import { getWait } from "../store/waits";
import { getCandidate, candidateView } from "../store/orientation";
import { getWorkItem, workItemView } from "../store/work-items";
import type { HostDb } from "../db/open";
import type { RequestContext } from "./context";

/** One resolved reference, or the reason it could not be. */
export type Resolved =
  | { ref: string; ok: true; value: unknown }
  | { ref: string; ok: false; error: { code: string; message: string } };

const RESOLVERS: Record<string, (db: HostDb, key: string) => unknown> = {
  event: (db, key) => (/^[1-9][0-9]{0,15}$/.test(key) ? getEvent(db, Number(key)) : undefined),
  execution: (db, key) => getExecution(db, key),
  effect: (db, key) => getEffect(db, key),
  wait: (db, key) => getWait(db, key),
  work_item: (db, key) => {
    const row = getWorkItem(db, key);
    return row ? workItemView(row) : undefined;
  },
  candidate: (db, key) => {
    const row = getCandidate(db, key);
    return row ? candidateView(row) : undefined;
  },
};

/** Resolve one `kind:key` reference against the durable log. */
export function resolveRef(db: HostDb, ref: string): Resolved {
  const colon = ref.indexOf(":");
  const kind = colon > 0 ? ref.slice(0, colon) : "";
  const key = colon > 0 ? ref.slice(colon + 1) : "";
  const resolver = RESOLVERS[kind];
  if (!resolver || key === "") {
    return { ref, ok: false, error: { code: "invalid_request", message: `unknown reference form ${JSON.stringify(ref)}; use event:N, execution:ID, effect:ID, wait:ID, work_item:ID or candidate:ID` } };
  }
  const value = resolver(db, key);
  if (value === undefined) return { ref, ok: false, error: { code: "not_found", message: `${ref} does not exist` } };
  return { ref, ok: true, value };
}

/** evidence.resolve: each ref resolved or answered with its own error. */
export async function evidenceResolve(ctx: RequestContext, params: { refs: string[] }): Promise<unknown> {
  return { results: params.refs.map((ref) => resolveRef(ctx.host.db, ref)) };
}
