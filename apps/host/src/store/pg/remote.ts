import { and, asc, desc, eq, isNull } from "drizzle-orm";
import { remoteGenerations, remoteNamespaces, remoteOperations } from "../../db/pg-schema";
import type { RemoteStore } from "../api/remote";
import type { RemoteGenerationRow, RemoteNamespaceRow, RemoteOperationRow } from "../remote";
import type { PgContext, Q } from "./context";

const first = <T>(rows: unknown[]) => rows[0] as T | undefined;

/** After a crash, on `q`: open generations ended with the host, running operations cut short (store/remote.ts). */
export async function recoverRemoteOn(q: Q, atMs: number): Promise<{ generations: number; operations: number }> {
  const generations = (await q.update(remoteGenerations).set({ endedAtMs: atMs, endReason: "host_restart" }).where(isNull(remoteGenerations.endedAtMs)).returning({ id: remoteGenerations.id })).length;
  const cut = { kind: "failed", error: "the host stopped while the operation ran (host_restart)" };
  const operations = (await q.update(remoteOperations).set({ status: "failed", completion: cut, endedBy: "host_restart", endedAtMs: atMs }).where(eq(remoteOperations.status, "running")).returning({ id: remoteOperations.id })).length;
  return { generations, operations };
}

/** RemoteStore over PostgreSQL. */
export function pgRemote(c: PgContext): RemoteStore {
  return {
    insertNamespace: (row) => c.write(row.sessionId, async (tx) => first<RemoteNamespaceRow>(await tx.insert(remoteNamespaces).values({ ...row, status: "open" }).returning())!),
    getNamespace: (id) => c.read(async (db) => first<RemoteNamespaceRow>(await db.select().from(remoteNamespaces).where(eq(remoteNamespaces.id, id)))),
    openNamespace: (sessionId, target) =>
      c.read(async (db) =>
        first<RemoteNamespaceRow>(
          await db.select().from(remoteNamespaces).where(and(eq(remoteNamespaces.sessionId, sessionId), eq(remoteNamespaces.target, target), eq(remoteNamespaces.status, "open"))).orderBy(desc(remoteNamespaces.openedAtMs)).limit(1),
        ),
      ),
    openNamespaces: () => c.read((db) => db.select().from(remoteNamespaces).where(eq(remoteNamespaces.status, "open")).orderBy(asc(remoteNamespaces.openedAtMs)) as Promise<RemoteNamespaceRow[]>),
    closeNamespace: (id, closedBy, atMs) =>
      c.writeHost(async (tx) => (await tx.update(remoteNamespaces).set({ status: "closed", closedBy, closedAtMs: atMs }).where(and(eq(remoteNamespaces.id, id), eq(remoteNamespaces.status, "open"))).returning({ id: remoteNamespaces.id })).length > 0),
    insertGeneration: (row) => c.writeHost(async (tx) => first<RemoteGenerationRow>(await tx.insert(remoteGenerations).values(row).returning())!),
    latestGeneration: (namespaceId) => c.read(async (db) => first<RemoteGenerationRow>(await db.select().from(remoteGenerations).where(eq(remoteGenerations.namespaceId, namespaceId)).orderBy(desc(remoteGenerations.id)).limit(1))),
    endGeneration: (namespaceId, generation, reason, atMs) =>
      c.writeHost(async (tx) => void (await tx.update(remoteGenerations).set({ endedAtMs: atMs, endReason: reason }).where(and(eq(remoteGenerations.namespaceId, namespaceId), eq(remoteGenerations.generation, generation), isNull(remoteGenerations.endedAtMs))))),
    recordGeneration: (namespace, generation) => {
      const write = async (tx: Q) => {
        if (namespace) await tx.insert(remoteNamespaces).values({ ...namespace, status: "open" });
        return first<RemoteGenerationRow>(await tx.insert(remoteGenerations).values(generation).returning())!;
      };
      // A namespace row is its session's (fenced as insertNamespace); a later generation is written as insertGeneration.
      return namespace ? c.write(namespace.sessionId, write) : c.writeHost(write);
    },
    closeWithGeneration: (namespaceId, generation, closedBy, atMs) =>
      c.writeHost(async (tx) => {
        await tx.update(remoteGenerations).set({ endedAtMs: atMs, endReason: "closed" }).where(and(eq(remoteGenerations.namespaceId, namespaceId), eq(remoteGenerations.generation, generation), isNull(remoteGenerations.endedAtMs)));
        await tx.update(remoteNamespaces).set({ status: "closed", closedBy, closedAtMs: atMs }).where(and(eq(remoteNamespaces.id, namespaceId), eq(remoteNamespaces.status, "open")));
      }),
    getOperation: (namespaceId, operationId) => c.read(async (db) => first<RemoteOperationRow>(await db.select().from(remoteOperations).where(and(eq(remoteOperations.namespaceId, namespaceId), eq(remoteOperations.operationId, operationId))))),
    insertOperation: (row) => c.writeHost(async (tx) => first<RemoteOperationRow>(await tx.insert(remoteOperations).values({ ...row, status: "running" }).returning())!),
    finishOperation: (namespaceId, operationId, end) =>
      c.writeHost(async (tx) =>
        void (await tx
          .update(remoteOperations)
          .set({ status: end.status, completion: end.completion, endedBy: end.endedBy, endedAtMs: end.atMs })
          .where(and(eq(remoteOperations.namespaceId, namespaceId), eq(remoteOperations.operationId, operationId), eq(remoteOperations.status, "running")))),
      ),
    recoverRemote: (atMs) => c.writeHost((tx) => recoverRemoteOn(tx, atMs)),
  };
}
