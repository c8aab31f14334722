// The TypeScript and Python validators, side by side on the same seeded random inputs: valid
// envelopes and mutations of them. They must agree on accept/reject, the value, the code and the path.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EnvelopeError, parseEnvelope } from "../src/index.js";
import { envelope } from "./arbitraries.js";

const PYTHON_DIR = fileURLToPath(new URL("../../../python", import.meta.url));
const VECTORS = fileURLToPath(new URL("../../../fixtures/envelopes.json", import.meta.url));
const PYTHON = process.env.KLBR_PYTHON ?? "python3";
const SEED = 20_240_601;

const PYTHON_SCRIPT = `
import json, sys
from klbr.envelope import EnvelopeError, parse_envelope
out = []
for value in json.load(sys.stdin):
    try:
        out.append({"ok": parse_envelope(value)})
    except EnvelopeError as error:
        out.append({"code": error.code, "path": error.path})
json.dump(out, sys.stdout)
`;

type Outcome = { ok: unknown } | { code: string; path: string };

function typescript(value: unknown): Outcome {
  try {
    return { ok: parseEnvelope(value) };
  } catch (error) {
    if (error instanceof EnvelopeError) return { code: error.code, path: error.path };
    throw error;
  }
}

function python(values: unknown[]): Outcome[] {
  const run = spawnSync(PYTHON, ["-B", "-c", PYTHON_SCRIPT], { cwd: PYTHON_DIR, input: JSON.stringify(values), maxBuffer: 256 << 20 });
  if (run.status !== 0) throw new Error(`python failed (${run.status}): ${run.stderr.toString()}`);
  return JSON.parse(run.stdout.toString()) as Outcome[];
}

type Node = Record<string | number, unknown>;

/** Every [container, key] pair in a JSON value. */
function slots(value: unknown, out: [Node, string | number][] = []): [Node, string | number][] {
  if (Array.isArray(value)) value.forEach((item, index) => (out.push([value as unknown as Node, index]), slots(item, out)));
  else if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      out.push([value as Node, key]);
      slots(item, out);
    }
  }
  return out;
}

// Values near the rules' edges, so mutations land on interesting faults.
const TRICKY: unknown[] = [
  null, true, false, 0, -1, 1, 1.5, 600, 600.5, 100, 101, 1e300, -0, 9007199254740991, 9007199254740992,
  "", "a b", "x".repeat(129), "x".repeat(128), "root", "g-1", "3f".repeat(32), "operator", "hooks", "workbench",
  "attention.plan", "delivery.review", "shutdown", "invoke", "ok", "error", "cell", "wake", "peer.list", "not_found",
  [], {}, [1], { kind: "global" }, { action: "allow" }, { stream: "stdout", text: "" },
  // C20: MIME types, base64 near the rules, klbr/omitted values.
  31, 32, "text/plain", "Image/PNG", "klbr/omitted", "iVBORw0KGgo=", "iVBORw0KGgoAAAANSUhEUg==", "/9j/", "/9j/4A==", "/9j/4B==",
  { "text/plain": "x" }, { "image/png": 5 }, { "text/plain": 0 },
];
const KEYS = ["kind", "id", "extra", "0", "10", "__proto__", "method", "value", "slot", "action", "text", "2", "text/plain", "image/png", "image/jpeg", "klbr/omitted", "klbr/x", "Text/HTML"];

const mutation = fc.tuple(envelope, fc.array(fc.tuple(fc.nat(), fc.nat(3), fc.nat(), fc.jsonValue({ maxDepth: 1 })), { minLength: 1, maxLength: 3 })).map(
  ([value, edits]) => {
    const copy = structuredClone(value) as unknown;
    for (const [where, how, pick, random] of edits) {
      const all = slots(copy);
      if (all.length === 0) break;
      const [container, key] = all[where % all.length]!;
      const replacement = how === 3 ? random : TRICKY[pick % TRICKY.length];
      if (how === 0 && !Array.isArray(container)) delete container[key];
      else if (how === 1 && !Array.isArray(container)) {
        Object.defineProperty(container, KEYS[pick % KEYS.length]!, { value: replacement, enumerable: true, writable: true, configurable: true });
      } else container[key] = structuredClone(replacement);
    }
    return copy;
  },
);

describe("TypeScript and Python agree", () => {
  it("on every seeded random and mutated envelope", () => {
    const inputs = [
      ...fc.sample(envelope, { seed: SEED, numRuns: 300 }),
      ...fc.sample(mutation, { seed: SEED + 1, numRuns: 2500 }),
    ];
    // JSON is the wire: both sides see exactly the same decoded value.
    const values = inputs.map((value) => JSON.parse(JSON.stringify(value)) as unknown);
    const theirs = python(values);
    expect(theirs).toHaveLength(values.length);
    let rejected = 0;
    values.forEach((value, index) => {
      const ours = typescript(value);
      if ("code" in ours) rejected++;
      expect(JSON.parse(JSON.stringify(theirs[index])), JSON.stringify(value).slice(0, 400)).toEqual(JSON.parse(JSON.stringify(ours)));
    });
    // The mutations must mostly hit faults, or this test proves little.
    expect(rejected).toBeGreaterThan(1500);
    // ... and spread over most codes, so every rule family is compared.
    expect(Object.keys(histogram(values.map(typescript))).length).toBeGreaterThanOrEqual(9);
  });

  it("on the shared vectors' envelope inputs", () => {
    const cases = (JSON.parse(readFileSync(VECTORS, "utf8")) as { cases: { entry?: string; input: unknown }[] }).cases;
    const values = cases.filter((item) => (item.entry ?? "envelope") === "envelope").map((item) => item.input);
    const theirs = python(values);
    values.forEach((value, index) => {
      expect(JSON.parse(JSON.stringify(theirs[index]))).toEqual(JSON.parse(JSON.stringify(typescript(value))));
    });
  });
});

function histogram(outcomes: Outcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of outcomes) {
    const key = "code" in item ? item.code : "ok";
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}
