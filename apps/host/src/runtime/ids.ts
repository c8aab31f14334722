import { randomBytes } from "node:crypto";

/** A fresh identifier (C2 alphabet): a prefix, a time component that sorts, and randomness. */
export function newId(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
}

/** The root session every host runs. */
export const ROOT_SESSION = "root";
