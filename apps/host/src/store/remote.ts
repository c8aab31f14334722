import { and, asc, desc, eq, isNull } from "drizzle-orm";
import type { HostDb } from "../db/open";
import { remoteGenerations, remoteNamespaces, remoteOperations } from "../db/schema";

/** One remote_namespaces row. */
export type RemoteNamespaceRow = typeof remoteNamespaces.$inferSelect;
/** One remote_generations row. */
export type RemoteGenerationRow = typeof remoteGenerations.$inferSelect;
/** One remote_operations row. */
export type RemoteOperationRow = typeof remoteOperations.$inferSelect;
/** A remote operation's terminal status. */
export type RemoteOperationStatus = Exclude<RemoteOperationRow["status"], "running">;

/** Record a new open namespace. */
export function insertNamespace(db: HostDb, row: Omit<typeof remoteNamespaces.$inferInsert, "status">): RemoteNamespaceRow {
  return db.insert(remoteNamespaces).values({ ...row, status: "open" }).returning().get();
}

/** One namespace by id. */
export function getNamespace(db: HostDb, id: string): RemoteNamespaceRow | undefined {
  return db.select().from(remoteNamespaces).where(eq(remoteNamespaces.id, id)).get();
}

/** The open namespace of a session on a target, if any. */
export function openNamespace(db: HostDb, sessionId: string, target: string): RemoteNamespaceRow | undefined {
  return db
    .select()
    .from(remoteNamespaces)
    .where(and(eq(remoteNamespaces.sessionId, sessionId), eq(remoteNamespaces.target, target), eq(remoteNamespaces.status, "open")))
    .orderBy(desc(remoteNamespaces.openedAtMs))
    .get();
}

/** Every open namespace, oldest first (for `klbr status`). */
export function openNamespaces(db: HostDb): RemoteNamespaceRow[] {
  return db.select().from(remoteNamespaces).where(eq(remoteNamespaces.status, "open")).orderBy(asc(remoteNamespaces.openedAtMs)).all();
}

/** Close an open namespace; false when it was not open. */
export function closeNamespace(db: HostDb, id: string, closedBy: string, atMs: number): boolean {
  const row = db
    .update(remoteNamespaces)
    .set({ status: "closed", closedBy, closedAtMs: atMs })
    .where(and(eq(remoteNamespaces.id, id), eq(remoteNamespaces.status, "open")))
    .returning()
    .get();
  return row !== undefined;
}

/** Record a generation that said hello. */
export function insertGeneration(db: HostDb, row: typeof remoteGenerations.$inferInsert): RemoteGenerationRow {
  return db.insert(remoteGenerations).values(row).returning().get();
}

/** The newest generation of a namespace (live or not). */
export function latestGeneration(db: HostDb, namespaceId: string): RemoteGenerationRow | undefined {
  return db.select().from(remoteGenerations).where(eq(remoteGenerations.namespaceId, namespaceId)).orderBy(desc(remoteGenerations.id)).get();
}

/** Close a generation with the reason it ended (once: a closed row keeps its first reason). */
export function endGeneration(db: HostDb, namespaceId: string, generation: string, reason: string, atMs: number): void {
  db.update(remoteGenerations)
    .set({ endedAtMs: atMs, endReason: reason })
    .where(and(eq(remoteGenerations.namespaceId, namespaceId), eq(remoteGenerations.generation, generation), isNull(remoteGenerations.endedAtMs)))
    .run();
}

/** See RemoteStore.recordGeneration. */
export function recordGeneration(db: HostDb, namespace: Omit<typeof remoteNamespaces.$inferInsert, "status"> | null, generation: typeof remoteGenerations.$inferInsert): RemoteGenerationRow {
  return db.transaction((tx) => {
    if (namespace) insertNamespace(tx as never, namespace);
    return insertGeneration(tx as never, generation);
  });
}

/** See RemoteStore.closeWithGeneration. */
export function closeWithGeneration(db: HostDb, namespaceId: string, generation: string, closedBy: string, atMs: number): void {
  db.transaction((tx) => {
    endGeneration(tx as never, namespaceId, generation, "closed", atMs);
    closeNamespace(tx as never, namespaceId, closedBy, atMs);
  });
}

/** One operation by its identity. */
export function getOperation(db: HostDb, namespaceId: string, operationId: string): RemoteOperationRow | undefined {
  return db
    .select()
    .from(remoteOperations)
    .where(and(eq(remoteOperations.namespaceId, namespaceId), eq(remoteOperations.operationId, operationId)))
    .get();
}

/** Open an operation row before the cell is sent. */
export function insertOperation(db: HostDb, row: Omit<typeof remoteOperations.$inferInsert, "status">): RemoteOperationRow {
  return db.insert(remoteOperations).values({ ...row, status: "running" }).returning().get();
}

/** Close an operation with the completion record the cell was sent. */
export function finishOperation(
  db: HostDb,
  namespaceId: string,
  operationId: string,
  end: { status: RemoteOperationStatus; completion: unknown; endedBy: string | null; atMs: number },
): void {
  db.update(remoteOperations)
    .set({ status: end.status, completion: end.completion, endedBy: end.endedBy, endedAtMs: end.atMs })
    .where(and(eq(remoteOperations.namespaceId, namespaceId), eq(remoteOperations.operationId, operationId), eq(remoteOperations.status, "running")))
    .run();
}

/**
 * After a crash: every generation still open ended with the host (its ssh died with it, and its
 * keeper with the connection), and every operation still running was cut short.
 */
export function recoverRemote(db: HostDb, atMs: number): { generations: number; operations: number } {
  const generations = db.update(remoteGenerations).set({ endedAtMs: atMs, endReason: "host_restart" }).where(isNull(remoteGenerations.endedAtMs)).run().changes;
  const cut = { kind: "failed", error: "the host stopped while the operation ran (host_restart)" };
  const operations = db
    .update(remoteOperations)
    .set({ status: "failed", completion: cut, endedBy: "host_restart", endedAtMs: atMs })
    .where(eq(remoteOperations.status, "running"))
    .run().changes;
  return { generations, operations };
}
