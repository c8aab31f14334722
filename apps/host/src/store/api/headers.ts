import type { CurrentSource } from "../orientation";

/** A header record an observation appends. */
export interface HeaderAppend {
  type: "header_pin" | "header_revision";
  digest: string;
  record: unknown;
}

/** The orientation sources adopted for a session: the global scope's and its own, each by target (store/orientation.ts currentSources). */
export interface AdoptedRows {
  global: CurrentSource[];
  own: CurrentSource[];
}

/**
 * What an observation of a session's header does with its chain and adopted sources: the record to
 * append (null: none) and what to answer. Pure: a store may call it more than once (a read without
 * the write lock first, then again under it; a PostgreSQL transaction asked again).
 */
export type HeaderPlan<T> = (chain: unknown[], adopted: AdoptedRows) => { append: HeaderAppend | null; result: T };

/** Headers records (store/headers.ts). */
export interface HeadersStore {
  /** Append a header pin or revision record for a session; returns its id. */
  appendHeaderRecord(row: { sessionId: string; type: "header_pin" | "header_revision"; digest: string; record: unknown; atMs: number }): Promise<number>;
  /** A session's header rows after `afterId`, with their ids, in the order they were written. */
  headerRows(sessionId: string, afterId?: number): Promise<Array<{ id: number; type: string; digest: string; record: unknown }>>;
  /** The session's newest pin (its head): id and text; undefined before the first pin. */
  latestPin(sessionId: string): Promise<{ id: number; text: string; digest: string } | undefined>;
  /** One header record by id. */
  headerRecord(id: number): Promise<{ id: number; type: string; digest: string; record: unknown } | undefined>;
  /** A session's header records in the order they were written. */
  headerChain(sessionId: string): Promise<unknown[]>;
  /**
   * Observe a session's header (C11): `plan` over its chain and adopted sources as they are, and
   * the record it asks for appended with them in one write, so no other observation or adoption
   * lands between what the plan read and what it appends. Most observations find the header
   * current: that is read without the write lock (nothing written, nothing fenced).
   */
  observeHeader<T>(sessionId: string, plan: HeaderPlan<T>, atMs: number): Promise<T>;
}
