import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { EnvelopeError } from "./error.js";
import { parseEnvelope, parseHello, parseHookInput, parseHookResult, parseHostRequest } from "./parse.js";
import type { HookSlot, WorkerRole } from "./types.js";

interface Case {
  description: string;
  entry?: "envelope" | "host_request" | "hook_input" | "hook_result" | "hello";
  slot?: HookSlot;
  role?: WorkerRole;
  identity?: { session_id?: string; generation?: string };
  input: unknown;
  expected?: unknown;
  error?: { code: string; path: string };
}

const FILE = fileURLToPath(new URL("../../../fixtures/envelopes.json", import.meta.url));
const cases = (JSON.parse(readFileSync(FILE, "utf8")) as { cases: Case[] }).cases;

function run(item: Case): unknown {
  switch (item.entry ?? "envelope") {
    case "envelope":
      return parseEnvelope(item.input, { sessionId: item.identity?.session_id, generation: item.identity?.generation });
    case "host_request":
      return parseHostRequest(item.input);
    case "hook_input":
      return parseHookInput(item.slot!, item.input);
    case "hook_result":
      return parseHookResult(item.slot!, item.input);
    case "hello":
      return parseHello(item.input, item.role);
    default:
      throw new Error(`unknown entry ${String(item.entry)} in "${item.description}"`);
  }
}

describe("fixtures/envelopes.json", () => {
  it("holds enough cases with unique descriptions", () => {
    expect(new Set(cases.map((item) => item.description)).size).toBe(cases.length);
    expect(cases.filter((item) => item.error).length).toBeGreaterThanOrEqual(60);
    for (const item of cases) expect(("expected" in item) !== ("error" in item), item.description).toBe(true);
  });

  it.each(cases.map((item) => [item.description, item] as const))("%s", (_description, item) => {
    if (item.error) {
      let thrown: unknown;
      try {
        run(item);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(EnvelopeError);
      const error = thrown as EnvelopeError;
      expect({ code: error.code, path: error.path }).toEqual(item.error);
    } else {
      const output = run(item);
      expect(output).toEqual(item.expected === "input" ? item.input : item.expected);
      // A fresh value: parsing never hands back the caller's object.
      expect(output).not.toBe(item.input);
    }
  });
});
