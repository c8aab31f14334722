import { createHash, timingSafeEqual } from "node:crypto";
import { SupervisorError } from "./errors.js";
import type { HelloMessage } from "./wire.js";

/** The hook slots a hooks worker must announce, in any order. */
export const HOOK_SLOT_NAMES: readonly string[] = ["attention.plan", "delivery.review"];

/** What a hello must state; `undefined` fields are not checked. */
export interface HelloExpectation {
  token: string;
  role: "workbench" | "hooks";
  revision?: string | null | undefined;
  skills?: string | null | undefined;
}

/** Compare two tokens in constant time, whatever their lengths. */
export function tokensEqual(a: string, b: string): boolean {
  const da = createHash("sha256").update(a, "utf8").digest();
  const db = createHash("sha256").update(b, "utf8").digest();
  return timingSafeEqual(da, db) && a.length === b.length;
}

/** Throw WORKER_BAD_TOKEN or WORKER_BAD_HELLO unless `hello` is the one this spawn expects. */
export function checkHello(hello: HelloMessage, expected: HelloExpectation): void {
  if (!tokensEqual(String(hello.token), expected.token)) {
    throw new SupervisorError("WORKER_BAD_TOKEN", "the connecting process presented a token that is not the one this spawn issued");
  }
  if (hello.role !== expected.role) {
    throw new SupervisorError("WORKER_BAD_HELLO", `hello role ${JSON.stringify(hello.role)} is not the expected ${JSON.stringify(expected.role)}`);
  }
  const slots = [...(hello.slots as readonly string[])].sort();
  const wanted = expected.role === "hooks" ? [...HOOK_SLOT_NAMES].sort() : [];
  if (slots.length !== wanted.length || slots.some((s, i) => s !== wanted[i])) {
    throw new SupervisorError("WORKER_BAD_HELLO", `hello slots ${JSON.stringify(hello.slots)} are not ${JSON.stringify(wanted)} for role ${expected.role}`);
  }
  if (expected.role === "workbench" && hello.revision !== null) {
    throw new SupervisorError("WORKER_BAD_HELLO", `a workbench hello must carry revision null, got ${JSON.stringify(hello.revision)}`);
  }
  if (expected.revision !== undefined && hello.revision !== expected.revision) {
    throw new SupervisorError("WORKER_BAD_HELLO", `hello revision ${JSON.stringify(hello.revision)} is not the expected ${JSON.stringify(expected.revision)}`);
  }
  if (expected.skills !== undefined && hello.skills !== expected.skills) {
    throw new SupervisorError("WORKER_BAD_HELLO", `hello skills ${JSON.stringify(hello.skills)} is not the expected ${JSON.stringify(expected.skills)}`);
  }
}
