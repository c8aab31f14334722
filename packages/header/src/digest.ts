import { createHash } from "node:crypto";

/** SHA-256 of the UTF-8 bytes of `text`, as 64 lowercase hex characters (C2). */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** True when `value` is a digest: 64 lowercase hex characters. */
export function isDigest(value: unknown): value is string {
  return typeof value === "string" && /^[0-9a-f]{64}$/.test(value);
}
