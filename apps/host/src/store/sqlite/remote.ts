import { insertNamespace, getNamespace, openNamespace, openNamespaces, closeNamespace, insertGeneration, latestGeneration, endGeneration, getOperation, insertOperation, finishOperation, recoverRemote, recordGeneration, closeWithGeneration } from "../remote";
import type { RemoteStore } from "../api/remote";
import type { SqliteContext } from "./context";

/** RemoteStore over the synchronous SQLite functions. */
export function sqliteRemote(c: SqliteContext): RemoteStore {
  return {
    insertNamespace: (row) => c.write(row.sessionId, () => insertNamespace(c.db, row)),
    getNamespace: async (id) => getNamespace(c.db, id),
    openNamespace: async (sessionId, target) => openNamespace(c.db, sessionId, target),
    openNamespaces: async () => openNamespaces(c.db),
    closeNamespace: async (id, closedBy, atMs) => closeNamespace(c.db, id, closedBy, atMs),
    insertGeneration: async (row) => insertGeneration(c.db, row),
    latestGeneration: async (namespaceId) => latestGeneration(c.db, namespaceId),
    endGeneration: async (namespaceId, generation, reason, atMs) => endGeneration(c.db, namespaceId, generation, reason, atMs),
    recordGeneration: (namespace, generation) => (namespace ? c.write(namespace.sessionId, () => recordGeneration(c.db, namespace, generation)) : Promise.resolve(recordGeneration(c.db, null, generation))),
    closeWithGeneration: async (namespaceId, generation, closedBy, atMs) => closeWithGeneration(c.db, namespaceId, generation, closedBy, atMs),
    getOperation: async (namespaceId, operationId) => getOperation(c.db, namespaceId, operationId),
    insertOperation: async (row) => insertOperation(c.db, row),
    finishOperation: async (namespaceId, operationId, end) => finishOperation(c.db, namespaceId, operationId, end),
    recoverRemote: async (atMs) => recoverRemote(c.db, atMs),
  };
}
