import { describe, expect, it } from "vitest";
import { checkHello, tokensEqual } from "./hello.js";
import type { HelloMessage } from "./wire.js";

const TOKEN = "ab".repeat(32);
const bench: HelloMessage = { kind: "hello", token: TOKEN, role: "workbench", revision: null, slots: [], skills: null };
const hooks: HelloMessage = { kind: "hello", token: TOKEN, role: "hooks", revision: "d".repeat(64), slots: ["delivery.review", "attention.plan"], skills: null };

function code(fn: () => void): string | undefined {
  try {
    fn();
  } catch (err) {
    return (err as { code?: string }).code;
  }
  return undefined;
}

describe("tokensEqual", () => {
  it("is true only for identical tokens, whatever the lengths", () => {
    expect(tokensEqual(TOKEN, TOKEN)).toBe(true);
    expect(tokensEqual(TOKEN, TOKEN.slice(1))).toBe(false);
    expect(tokensEqual(TOKEN, "cd".repeat(32))).toBe(false);
    expect(tokensEqual("", TOKEN)).toBe(false);
  });
});

describe("checkHello", () => {
  it("accepts a matching workbench and hooks hello (slots in any order)", () => {
    expect(code(() => checkHello(bench, { token: TOKEN, role: "workbench" }))).toBeUndefined();
    expect(code(() => checkHello(hooks, { token: TOKEN, role: "hooks", revision: "d".repeat(64), skills: null }))).toBeUndefined();
  });

  it("a wrong token is WORKER_BAD_TOKEN, checked before anything else", () => {
    expect(code(() => checkHello({ ...hooks, token: "x" }, { token: TOKEN, role: "workbench" }))).toBe("WORKER_BAD_TOKEN");
  });

  it.each([
    ["role", { ...bench, role: "hooks" as const }, { token: TOKEN, role: "workbench" as const }],
    ["slots of a workbench", { ...bench, slots: ["attention.plan" as const] }, { token: TOKEN, role: "workbench" as const }],
    ["missing hook slot", { ...hooks, slots: ["attention.plan" as const] }, { token: TOKEN, role: "hooks" as const }],
    ["workbench revision", { ...bench, revision: "d".repeat(64) }, { token: TOKEN, role: "workbench" as const }],
    ["revision", hooks, { token: TOKEN, role: "hooks" as const, revision: "e".repeat(64) }],
    ["skills", bench, { token: TOKEN, role: "workbench" as const, skills: "f".repeat(64) }],
  ])("a mismatched %s is WORKER_BAD_HELLO", (_what, hello, expected) => {
    expect(code(() => checkHello(hello as HelloMessage, expected))).toBe("WORKER_BAD_HELLO");
  });
});
