import type { Store } from "../store/api";
import { candidateView } from "../store/orientation";
import { workItemView } from "../store/work-items";
import type { RequestContext } from "./context";
import { cutToFit, REPLY_BUDGET_BYTES, snakeKeys } from "./fit";

/** One resolved reference (its row with snake_case keys, as on the wire), or the reason it could not be. */
export type Resolved =
  | { ref: string; ok: true; value: unknown; truncated_bytes?: number }
  | { ref: string; ok: false; error: { code: string; message: string } };

/** What references are resolved against. */
export type EvidenceStore = Pick<Store, "getEvent" | "getExecution" | "getEffect" | "getWait" | "getWorkItem" | "getCandidate">;

const RESOLVERS: Record<string, (store: EvidenceStore, key: string) => Promise<unknown>> = {
  event: async (store, key) => (/^[1-9][0-9]{0,15}$/.test(key) ? store.getEvent(Number(key)) : undefined),
  execution: async (store, key) => {
    const row = await store.getExecution(key);
    if (!row) return undefined;
    // C17: a cell's cost is for the operator (klbr log, status); what a cell resolves never shows it.
    const { cpuMs: _cpu, peakRssBytes: _rss, ...rest } = row;
    return rest;
  },
  effect: (store, key) => store.getEffect(key),
  wait: (store, key) => store.getWait(key),
  work_item: async (store, key) => {
    const row = await store.getWorkItem(key);
    return row ? workItemView(row) : undefined;
  },
  candidate: async (store, key) => {
    const row = await store.getCandidate(key);
    return row ? candidateView(row) : undefined;
  },
};

/** Resolve one `kind:key` reference against the durable log. */
export async function resolveRef(store: EvidenceStore, ref: string): Promise<Resolved> {
  const colon = ref.indexOf(":");
  const kind = colon > 0 ? ref.slice(0, colon) : "";
  const key = colon > 0 ? ref.slice(colon + 1) : "";
  const resolver = RESOLVERS[kind];
  if (!resolver || key === "") {
    return { ref, ok: false, error: { code: "invalid_request", message: `unknown reference form ${JSON.stringify(ref)}; use event:N, execution:ID, effect:ID, wait:ID, work_item:ID or candidate:ID` } };
  }
  const value = await resolver(store, key);
  if (value === undefined) return { ref, ok: false, error: { code: "not_found", message: `${ref} does not exist` } };
  return { ref, ok: true, value: snakeKeys(value) };
}

/**
 * evidence.resolve: each ref resolved or answered with its own error. The reply always fits one
 * frame: the longest strings (an execution's output, a long payload) are cut until it does, and
 * what is cut is counted per result (`truncated_bytes`) and in all.
 */
export async function evidenceResolve(ctx: RequestContext, params: { refs: string[] }, budget: number = REPLY_BUDGET_BYTES): Promise<unknown> {
  const results: Resolved[] = [];
  // One at a time, in order: a reply's results are the refs' order, and the reads stay one connection's.
  for (const ref of params.refs) results.push(await resolveRef(ctx.host.store, ref));
  const reply = { results, truncated_bytes: 0 };
  const values = results.map((r) => (r.ok ? r.value : null));
  const cut = cutToFit(values, () => JSON.stringify(reply), budget);
  results.forEach((r, i) => {
    if (r.ok && cut[i]! > 0) r.truncated_bytes = cut[i]!;
  });
  reply.truncated_bytes = cut.reduce((a, b) => a + b, 0);
  // The counts themselves add a few bytes: cut again if they pushed the reply over.
  if (Buffer.byteLength(JSON.stringify(reply)) > budget) {
    const more = cutToFit(values, () => JSON.stringify(reply), budget - 64);
    results.forEach((r, i) => {
      if (r.ok && more[i]! > 0) r.truncated_bytes = (r.truncated_bytes ?? 0) + more[i]!;
    });
    reply.truncated_bytes += more.reduce((a, b) => a + b, 0);
  }
  return reply;
}
