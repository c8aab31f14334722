import type { ToolCall } from "./records.js";

/** An image a message carries (C20, routes with `"images": true`): its type and its bytes in base64. */
export interface ImagePart {
  mime: "image/png" | "image/jpeg";
  base64: string;
}

/** A message in the driver's neutral form, before a route's wire shape is applied. */
export type Message =
  | { role: "system"; text: string }
  /** `images`: a cell result's images when it reads as a user message (no call to answer). */
  | { role: "user"; text: string; images?: ImagePart[] }
  | { role: "assistant"; text: string; calls: ToolCall[] }
  | { role: "tool"; call_id: string; text: string; images?: ImagePart[] };
