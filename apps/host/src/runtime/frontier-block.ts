import { composeFrontierBlock, renderCellResult, type FrontierSection } from "@klbr/driver";
import { frameInput, stampOrUnknown } from "@klbr/transcript";
import type { Store } from "../store/api";

/** What the sections read of the log. */
export type FrontierStore = Pick<Store, "loadTranscript" | "openWorkItems" | "stagedCandidates" | "sessionOpenWaits" | "lastCellThrough" | "executionCode" | "cellResult" | "openPeerRequests">;

/** What a section provider reads: the log, the session, and the last record the fold covers. */
export interface FrontierContext {
  store: FrontierStore;
  sessionId: string;
  coversThrough: number;
}

/**
 * One section of the frontier block (C12), written from the log only (deterministic, no model
 * call). Families that own more state (work items, staged candidates, peer requests) register
 * theirs with `Host.addFrontierSection`.
 */
export type FrontierSectionProvider = (ctx: FrontierContext) => Promise<FrontierSection>;

/** Inputs the fold covers that no reply came after: the model has not answered them yet. */
export const pendingInputsSection: FrontierSectionProvider = async ({ store, sessionId, coversThrough }) => {
  const records = await store.loadTranscript(sessionId, 0, coversThrough);
  const lastReply = records.findLastIndex((r) => r.kind === "reply");
  const lines = records.slice(lastReply + 1).flatMap((r) => (r.kind === "input" ? [frameInput(r.event)] : []));
  return { title: "pending inputs", lines };
};

/** The session's open maintenance work items (C11). */
export const openWorkItemsSection: FrontierSectionProvider = async ({ store, sessionId }) => ({
  title: "open work items",
  lines: (await store.openWorkItems(sessionId)).map((w) => `work item ${w.id}: ${w.purpose} (reason: ${w.reason}${w.evidenceRefs.length ? `; evidence: ${w.evidenceRefs.join(", ")}` : ""})`),
});

/** Orientation candidates staged for the session's scope and not adopted (C11). */
export const stagedCandidatesSection: FrontierSectionProvider = async ({ store, sessionId }) => ({
  title: "staged candidates",
  lines: (await store.stagedCandidates(sessionId)).map((c) => {
    const scope = c.scopeKind === "global" ? "global" : `session ${String(c.scopeSessionId)}`;
    const first = c.text.split("\n", 1)[0] ?? "";
    return `candidate ${c.id} for ${c.target} (${scope}, digest ${c.digest.slice(0, 12)}): ${first.length > 200 ? `${first.slice(0, 200)}...` : first}`;
  }),
});

/** The session's open waits. */
export const openWaitsSection: FrontierSectionProvider = async ({ store, sessionId }) => {
  const rows = await store.sessionOpenWaits(sessionId);
  return { title: "open waits", lines: rows.map((w) => `wait ${w.id}: ${w.reason}; deadline ${w.deadline_ms === null ? "none" : stampOrUnknown(w.deadline_ms)}`) };
};

/** The last cell the fold covers, its source and its framed result. */
export const lastCellSection: FrontierSectionProvider = async ({ store, sessionId, coversThrough }) => {
  const ref = await store.lastCellThrough(sessionId, coversThrough);
  if (ref === undefined) return { title: "last cell", lines: [] };
  const code = await store.executionCode(ref);
  const result = await store.cellResult(ref);
  return { title: "last cell", lines: [`\`\`\`python\n${code}${code.endsWith("\n") ? "" : "\n"}\`\`\``, result ? renderCellResult(result) : "(no result recorded)"] };
};

/**
 * The sections every host writes. Families that own more state register theirs with
 * `Host.addFrontierSection` (the peers family: open peer requests).
 */
export const DEFAULT_FRONTIER_SECTIONS: readonly FrontierSectionProvider[] = [
  pendingInputsSection,
  openWorkItemsSection,
  stagedCandidatesSection,
  openWaitsSection,
  lastCellSection,
];

/** The block's section order, C12's: a registered section takes its place here, not after it. */
export const FRONTIER_SECTION_ORDER: readonly string[] = ["pending inputs", "open work items", "staged candidates", "open peer requests", "open waits", "last cell"];

/** Where a section goes: its place in C12's order; a title C12 does not name goes before the last cell, which closes the block. */
function rank(title: string): number {
  const at = FRONTIER_SECTION_ORDER.indexOf(title);
  return at === -1 ? FRONTIER_SECTION_ORDER.length - 1.5 : at;
}

/** The block for a fold through `coversThrough`, its sections in C12's order whatever order they were registered in. */
export async function frontierBlock(providers: readonly FrontierSectionProvider[], ctx: FrontierContext): Promise<string> {
  // Read-only and independent: asked together (one round trip's wait on PostgreSQL, not six).
  const sections = await Promise.all(providers.map((p) => p(ctx)));
  // A stable sort: sections of equal rank keep their registration order (deterministic bytes).
  return composeFrontierBlock(sections.map((section, i) => ({ section, i })).sort((a, b) => rank(a.section.title) - rank(b.section.title) || a.i - b.i).map((x) => x.section));
}
