import type { UsageRecord } from "@klbr/usage";
import type { modelRequests } from "../../db/schema";
import type { ModelRequestRow } from "../model-requests";

/** ModelRequests records (store/model-requests.ts). */
export interface ModelRequestsStore {
  /** Open a model request row before the request is sent: a crash mid-request leaves evidence. */
  startModelRequest(row: Omit<typeof modelRequests.$inferInsert, "status" | "retries" | "usage" | "reply" | "responseModel" | "error" | "endedAtMs">): Promise<void>;
  /** Close a request as answered: the reply exactly as received and the usage as reported (null: none). */
  finishModelRequest(sessionId: string, id: string, end: { reply: unknown; responseModel?: string | null; usage: UsageRecord | null; retries: number; endedAtMs: number }): Promise<void>;
  /** Close a request as failed, with a stable code and what the route said. */
  failModelRequest(sessionId: string, id: string, end: { code: string; message: string; status?: number | null; retries: number; endedAtMs: number }): Promise<void>;
  /** Requests left running by a host that stopped mid-request: closed as `host_restart` (no reply was recorded, so none is replayed). */
  closeRunningModelRequests(nowMs: number): Promise<string[]>;
  /** A session's requests, oldest first. */
  sessionModelRequests(sessionId: string): Promise<ModelRequestRow[]>;
}
