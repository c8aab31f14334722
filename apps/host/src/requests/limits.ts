import { invalidRequest } from "./errors";

/** Identifier shape of C2: 1..128 of A-Z a-z 0-9 _ . - */
export const IDENTIFIER = /^[A-Za-z0-9_.-]{1,128}$/;

/** Refuse a text outside 1..`max` UTF-8 bytes, naming the field and its size. */
export function checkTextBytes(field: string, text: unknown, max: number): string {
  if (typeof text !== "string") throw invalidRequest(`${field} must be a string`);
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes < 1 || bytes > max) throw invalidRequest(`${field} must be 1..${max} UTF-8 bytes, got ${bytes}`);
  return text;
}

/** Refuse a value that is not an identifier (C2), naming the field. */
export function checkIdentifier(field: string, value: unknown): string {
  if (typeof value !== "string" || !IDENTIFIER.test(value)) {
    throw invalidRequest(`${field} must be an identifier (1..128 of A-Z a-z 0-9 _ . -), got ${JSON.stringify(value)}`);
  }
  return value;
}
