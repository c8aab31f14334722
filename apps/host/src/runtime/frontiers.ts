import { DEFAULT_FRONTIER_SECTIONS, frontierBlock, type FrontierSectionProvider, type FrontierStore } from "./frontier-block";
import type { Store } from "../store/api";

/** What the frontiers use of the host. */
export interface FrontiersDeps {
  store: FrontierStore & Pick<Store, "recordFrontier" | "cellRecordSeq" | "seqBefore" | "lastSeq">;
  now(): number;
  newId(prefix: string): string;
}

/** Frontiers (C12): the block a fold writes, from its section providers, and frontier.select. */
export class Frontiers {
  private readonly sections: FrontierSectionProvider[] = [...DEFAULT_FRONTIER_SECTIONS];

  constructor(private readonly deps: FrontiersDeps) {}

  /** Add a section to every frontier block written from now on (work items, candidates, peer requests ...). */
  addSection(provider: FrontierSectionProvider): void {
    this.sections.push(provider);
  }

  /** The frontier block for a fold of a session through `coversThrough`. */
  block(sessionId: string, coversThrough: number): Promise<string> {
    return frontierBlock(this.sections, { store: this.deps.store, sessionId, coversThrough });
  }

  /** frontier.select: a frontier through the transcript's last record, installed by the next request. */
  async select(sessionId: string, executionId: string): Promise<unknown> {
    const { store } = this.deps;
    // The selecting cell's own record (and its result) stays after the frontier: the model reads it after the fold.
    const own = await store.cellRecordSeq(sessionId, executionId);
    const coversThrough = own !== undefined ? await store.seqBefore(sessionId, own) : await store.lastSeq(sessionId);
    const row = await store.recordFrontier({
      id: this.deps.newId("fr"),
      sessionId,
      coversThrough,
      block: await this.block(sessionId, coversThrough),
      reason: "selected",
      executionId,
      createdAtMs: this.deps.now(),
    });
    return { frontier_id: row.id, covers_through: row.coversThrough, installs: "next_request" };
  }
}
