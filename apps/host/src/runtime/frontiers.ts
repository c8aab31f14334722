import type Database from "better-sqlite3";
import type { HostDb } from "../db/open";
import { recordFrontier } from "../store/frontiers";
import { cellRecordSeq, lastSeq, seqBefore } from "../store/transcript";
import { DEFAULT_FRONTIER_SECTIONS, frontierBlock, type FrontierSectionProvider } from "./frontier-block";

/** What the frontiers use of the host. */
export interface FrontiersDeps {
  db: HostDb;
  sqlite: Database.Database;
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
  block(sessionId: string, coversThrough: number): string {
    return frontierBlock(this.sections, { db: this.deps.db, sqlite: this.deps.sqlite, sessionId, coversThrough });
  }

  /** frontier.select: a frontier through the transcript's last record, installed by the next request. */
  select(sessionId: string, executionId: string): unknown {
    const { sqlite } = this.deps;
    // The selecting cell's own record (and its result) stays after the frontier: the model reads it after the fold.
    const own = cellRecordSeq(sqlite, sessionId, executionId);
    const coversThrough = own !== undefined ? seqBefore(sqlite, sessionId, own) : lastSeq(sqlite, sessionId);
    const row = recordFrontier(this.deps.db, {
      id: this.deps.newId("fr"),
      sessionId,
      coversThrough,
      block: this.block(sessionId, coversThrough),
      reason: "selected",
      executionId,
      createdAtMs: this.deps.now(),
    });
    return { frontier_id: row.id, covers_through: row.coversThrough, installs: "next_request" };
  }
}
