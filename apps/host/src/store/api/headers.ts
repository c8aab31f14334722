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
}
