import type { hostRequests } from "../../db/schema";
import type { ModelRequestRow } from "../model-requests";

/** Telemetry records (store/telemetry.ts). */
export interface TelemetryStore {
  /** One model request row by id. */
  modelRequestById(id: string): Promise<ModelRequestRow | undefined>;
  /** The tool call id the model gave a cell (null for a fenced cell, or a cell no model asked for). */
  callIdOfCell(executionId: string): Promise<string | null>;
  /** Every host request an execution made, with its reply, in the order they were made. */
  hostRequestsOf(executionId: string): Promise<Array<typeof hostRequests.$inferSelect>>;
  /**
   * The cells whose peer traffic reached a session in (sinceMs, untilMs]: requests sent to it, and
   * answers to the requests it sent. A turn then is (in part) their consequence.
   */
  peerCausesOf(sessionId: string, sinceMs: number, untilMs: number): Promise<string[]>;
}
