import { MAX_IDENTIFIER_LENGTH } from "./limits.js";

const IDENTIFIER = /^[A-Za-z0-9_.-]+$/;
const DIGEST = /^[0-9a-f]{64}$/;
const SNAKE_CODE = /^[a-z][a-z0-9_]*$/;

/** True for a C2 identifier: 1..128 of `A-Z a-z 0-9 _ . -`. */
export function isIdentifier(value: unknown): value is string {
  return typeof value === "string" && value.length <= MAX_IDENTIFIER_LENGTH && IDENTIFIER.test(value);
}

/** True for a C2 digest: 64 lowercase hex characters. */
export function isDigest(value: unknown): value is string {
  return typeof value === "string" && DIGEST.test(value);
}

/** True for a host reply error code (C8): snake_case, `^[a-z][a-z0-9_]*$`. */
export function isErrorCode(value: unknown): value is string {
  return typeof value === "string" && SNAKE_CODE.test(value);
}
