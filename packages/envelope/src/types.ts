import type * as v from "valibot";
import type { EnvelopeSchema } from "./envelope.js";
import type {
  AttentionInputSchema,
  AttentionResultSchema,
  DeliveryInputSchema,
  DeliveryResultSchema,
  HookSlotSchema,
} from "./hook.js";
import type { HostRequestSchema } from "./host-request.js";
import type { DisplayMessageSchema } from "./display.js";
import type {
  CellResultSchema,
  CompletedMessageSchema,
  CompletedResultSchema,
  ExecuteMessageSchema,
  FailedResultSchema,
  HelloMessageSchema,
  HookResultSchema,
  HostReplyMessageSchema,
  HostReplySchema,
  HostRequestMessageSchema,
  InterruptMessageSchema,
  InvokeMessageSchema,
  MessageSchema,
  OutputMessageSchema,
  OutputRecordSchema,
  ShutdownMessageSchema,
  WORKER_ROLES,
} from "./message.js";

/** A validated envelope. */
export type Envelope = v.InferOutput<typeof EnvelopeSchema>;
/** Any validated message. */
export type Message = v.InferOutput<typeof MessageSchema>;
/** The kind of a message. */
export type MessageKind = Message["kind"];
/** `hello` message. */
export type HelloMessage = v.InferOutput<typeof HelloMessageSchema>;
/** `execute` message. */
export type ExecuteMessage = v.InferOutput<typeof ExecuteMessageSchema>;
/** `invoke` message. */
export type InvokeMessage = v.InferOutput<typeof InvokeMessageSchema>;
/** `host_request` message. */
export type HostRequestMessage = v.InferOutput<typeof HostRequestMessageSchema>;
/** `host_reply` message. */
export type HostReplyMessage = v.InferOutput<typeof HostReplyMessageSchema>;
/** `completed` message. */
export type CompletedMessage = v.InferOutput<typeof CompletedMessageSchema>;
/** `output` message (C16 live output). */
export type OutputMessage = v.InferOutput<typeof OutputMessageSchema>;
/** `display` message (C20 rich display). */
export type DisplayMessage = v.InferOutput<typeof DisplayMessageSchema>;
/** `interrupt` message. */
export type InterruptMessage = v.InferOutput<typeof InterruptMessageSchema>;
/** `shutdown` message. */
export type ShutdownMessage = v.InferOutput<typeof ShutdownMessageSchema>;
/** `completed.result`: cell, hook or failed. */
export type CompletedResult = v.InferOutput<typeof CompletedResultSchema>;
/** `completed.result` of a cell. */
export type CellResult = v.InferOutput<typeof CellResultSchema>;
/** `completed.result` of a hook. */
export type HookResult = v.InferOutput<typeof HookResultSchema>;
/** `completed.result` of a worker-level failure. */
export type FailedResult = v.InferOutput<typeof FailedResultSchema>;
/** One cell output record. */
export type OutputRecord = v.InferOutput<typeof OutputRecordSchema>;
/** A host request. */
export type HostRequest = v.InferOutput<typeof HostRequestSchema>;
/** A host request method name (aliases included). */
export type HostRequestMethod = HostRequest["method"];
/** The host request of one method. */
export type HostRequestOf<M extends HostRequestMethod> = Extract<HostRequest, { method: M }>;
/** A `host_reply` payload: ok or error. */
export type HostReply = v.InferOutput<typeof HostReplySchema>;
/** A decision slot name. */
export type HookSlot = v.InferOutput<typeof HookSlotSchema>;
/** A worker role. */
export type WorkerRole = (typeof WORKER_ROLES)[number];
/** `attention.plan` input. */
export type AttentionInput = v.InferOutput<typeof AttentionInputSchema>;
/** `attention.plan` result. */
export type AttentionResult = v.InferOutput<typeof AttentionResultSchema>;
/** `delivery.review` input. */
export type DeliveryInput = v.InferOutput<typeof DeliveryInputSchema>;
/** `delivery.review` result. */
export type DeliveryResult = v.InferOutput<typeof DeliveryResultSchema>;
/** The typed input of a slot. */
export type HookInputOf<S extends HookSlot> = S extends "attention.plan" ? AttentionInput : DeliveryInput;
/** The typed result of a slot. */
export type HookResultOf<S extends HookSlot> = S extends "attention.plan" ? AttentionResult : DeliveryResult;
