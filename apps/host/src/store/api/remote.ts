import type { remoteGenerations, remoteNamespaces, remoteOperations } from "../../db/schema";
import type { RemoteNamespaceRow, RemoteGenerationRow, RemoteOperationRow, RemoteOperationStatus } from "../remote";

/** Remote records (store/remote.ts). */
export interface RemoteStore {
  /** Record a new open namespace. */
  insertNamespace(row: Omit<typeof remoteNamespaces.$inferInsert, "status">): Promise<RemoteNamespaceRow>;
  /** One namespace by id. */
  getNamespace(id: string): Promise<RemoteNamespaceRow | undefined>;
  /** The open namespace of a session on a target, if any. */
  openNamespace(sessionId: string, target: string): Promise<RemoteNamespaceRow | undefined>;
  /** Every open namespace, oldest first (for `klbr status`). */
  openNamespaces(): Promise<RemoteNamespaceRow[]>;
  /** Close an open namespace; false when it was not open. */
  closeNamespace(id: string, closedBy: string, atMs: number): Promise<boolean>;
  /** Record a generation that said hello. */
  insertGeneration(row: typeof remoteGenerations.$inferInsert): Promise<RemoteGenerationRow>;
  /** The newest generation of a namespace (live or not). */
  latestGeneration(namespaceId: string): Promise<RemoteGenerationRow | undefined>;
  /** Close a generation with the reason it ended (once: a closed row keeps its first reason). */
  endGeneration(namespaceId: string, generation: string, reason: string, atMs: number): Promise<void>;
  /** A generation that said hello, with its namespace when this is the namespace's first (one transaction: no namespace without its generation). */
  recordGeneration(namespace: Omit<typeof remoteNamespaces.$inferInsert, "status"> | null, generation: typeof remoteGenerations.$inferInsert): Promise<RemoteGenerationRow>;
  /** remote.close: the generation ended `closed` and the namespace closed by `closedBy`, in one transaction. */
  closeWithGeneration(namespaceId: string, generation: string, closedBy: string, atMs: number): Promise<void>;
  /** One operation by its identity. */
  getOperation(namespaceId: string, operationId: string): Promise<RemoteOperationRow | undefined>;
  /** Open an operation row before the cell is sent. */
  insertOperation(row: Omit<typeof remoteOperations.$inferInsert, "status">): Promise<RemoteOperationRow>;
  /** Close an operation with the completion record the cell was sent. */
  finishOperation(namespaceId: string, operationId: string, end: { status: RemoteOperationStatus; completion: unknown; endedBy: string | null; atMs: number }): Promise<void>;
  /**
   * After a crash: every generation still open ended with the host (its ssh died with it, and its
   * keeper with the connection), and every operation still running was cut short.
   */
  recoverRemote(atMs: number): Promise<{ generations: number; operations: number }>;
}
