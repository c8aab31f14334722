import { composeFrontierBlock, renderCellResult, type FrontierSection } from "@klbr/driver";
import { frameInput, stampOrUnknown } from "@klbr/transcript";
import type Database from "better-sqlite3";
import type { HostDb } from "../db/open";
import { stagedCandidates } from "../store/orientation";
import { cellResult, executionCode, lastCellThrough, loadTranscript } from "../store/transcript";
import { sessionOpenWaits } from "../store/waits";
import { openWorkItems } from "../store/work-items";

/** What a section provider reads: the log, the session, and the last record the fold covers. */
export interface FrontierContext {
  db: HostDb;
  sqlite: Database.Database;
  sessionId: string;
  coversThrough: number;
}

/**
 * One section of the frontier block (C12), written from the log only (deterministic, no model
 * call). Families that own more state (work items, staged candidates, peer requests) register
 * theirs with `Host.addFrontierSection`.
 */
export type FrontierSectionProvider = (ctx: FrontierContext) => FrontierSection;

/** Inputs the fold covers that no reply came after: the model has not answered them yet. */
export const pendingInputsSection: FrontierSectionProvider = ({ sqlite, sessionId, coversThrough }) => {
  const records = loadTranscript(sqlite, sessionId, 0, coversThrough);
  const lastReply = records.findLastIndex((r) => r.kind === "reply");
  const lines = records.slice(lastReply + 1).flatMap((r) => (r.kind === "input" ? [frameInput(r.event)] : []));
  return { title: "pending inputs", lines };
};

/** The session's open maintenance work items (C11). */
export const openWorkItemsSection: FrontierSectionProvider = ({ db, sessionId }) => ({
  title: "open work items",
  lines: openWorkItems(db, sessionId).map((w) => `work item ${w.id}: ${w.purpose} (reason: ${w.reason}${w.evidenceRefs.length ? `; evidence: ${w.evidenceRefs.join(", ")}` : ""})`),
});

/** Orientation candidates staged for the session's scope and not adopted (C11). */
export const stagedCandidatesSection: FrontierSectionProvider = ({ db, sessionId }) => ({
  title: "staged candidates",
  lines: stagedCandidates(db, sessionId).map((c) => {
    const scope = c.scopeKind === "global" ? "global" : `session ${String(c.scopeSessionId)}`;
    const first = c.text.split("\n", 1)[0] ?? "";
    return `candidate ${c.id} for ${c.target} (${scope}, digest ${c.digest.slice(0, 12)}): ${first.length > 200 ? `${first.slice(0, 200)}...` : first}`;
  }),
});

/** The session's open waits. */
export const openWaitsSection: FrontierSectionProvider = ({ sqlite, sessionId }) => {
  const rows = sessionOpenWaits(sqlite, sessionId);
  return { title: "open waits", lines: rows.map((w) => `wait ${w.id}: ${w.reason}; deadline ${w.deadline_ms === null ? "none" : stampOrUnknown(w.deadline_ms)}`) };
};

/** The last cell the fold covers, its source and its framed result. */
export const lastCellSection: FrontierSectionProvider = ({ sqlite, sessionId, coversThrough }) => {
  const ref = lastCellThrough(sqlite, sessionId, coversThrough);
  if (ref === undefined) return { title: "last cell", lines: [] };
  const code = executionCode(sqlite, ref);
  const result = cellResult(sqlite, ref);
  return { title: "last cell", lines: [`\`\`\`python\n${code}${code.endsWith("\n") ? "" : "\n"}\`\`\``, result ? renderCellResult(result) : "(no result recorded)"] };
};

/**
 * The sections every host writes, in the order C12 lists them; registered ones follow (the peers
 * family registers its open peer requests with `Host.addFrontierSection`).
 */
export const DEFAULT_FRONTIER_SECTIONS: readonly FrontierSectionProvider[] = [
  pendingInputsSection,
  openWorkItemsSection,
  stagedCandidatesSection,
  openWaitsSection,
  lastCellSection,
];

/** The block for a fold through `coversThrough`. */
export function frontierBlock(providers: readonly FrontierSectionProvider[], ctx: FrontierContext): string {
  return composeFrontierBlock(providers.map((p) => p(ctx)));
}
