import type { ToolCall } from "./records.js";

/** A message in the driver's neutral form, before a route's wire shape is applied. */
export type Message =
  | { role: "system"; text: string }
  | { role: "user"; text: string }
  | { role: "assistant"; text: string; calls: ToolCall[] }
  | { role: "tool"; call_id: string; text: string };
