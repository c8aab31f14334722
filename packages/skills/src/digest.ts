import { createHash } from "node:crypto";

const DIGEST_PATTERN = /^[0-9a-f]{64}$/;

/** The body digest: SHA-256 hex (lowercase) of the SKILL.md bytes. */
export function skillDigest(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** True when `value` is 64 lowercase hex characters (C2). */
export function isDigest(value: unknown): value is string {
  return typeof value === "string" && DIGEST_PATTERN.test(value);
}
