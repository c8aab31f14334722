// Runs every case of fixtures/header/*.json by its description; the Python suite reads the same files.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  applyChange,
  fold,
  HeaderError,
  observe,
  parseHeaderRecord,
  renderObservation,
  resolve,
  revise,
  splitLines,
  verifiedChange,
  type Actor,
  type Change,
  type ChangeBase,
  type ChangeTarget,
  type HeaderRevision,
  type SourceInput,
} from "../src/index.js";

interface Case {
  description: string;
  input: any;
  expected?: unknown;
  error?: { code: string };
}

function load(name: string): Case[] {
  const path = fileURLToPath(new URL(`../../../fixtures/header/${name}`, import.meta.url));
  const data = JSON.parse(readFileSync(path, "utf8")) as { cases: Case[] } | Case[];
  const cases = Array.isArray(data) ? data : data.cases;
  if (cases.length === 0) throw new Error(`${name} holds no cases`);
  return cases;
}

function run(name: string, call: (input: any) => unknown): void {
  describe(name, () => {
    for (const vector of load(name)) {
      it(vector.description, () => {
        if (vector.error) {
          let caught: unknown;
          try {
            call(vector.input);
          } catch (error) {
            caught = error;
          }
          expect(caught).toBeInstanceOf(HeaderError);
          expect((caught as HeaderError).code).toBe(vector.error.code);
        } else {
          expect(call(vector.input)).toStrictEqual(vector.expected);
        }
      });
    }
  });
}

run("lines.json", (input: { text: string }) => ({ lines: splitLines(input.text) }));
run("revise.json", (input: { base: ChangeBase; sources: SourceInput[] }) => revise(input.base, input.sources));
run("apply.json", (input: { base: ChangeBase; change: Change; target: ChangeTarget }) => {
  const { text, sources } = applyChange(input.base, input.change, input.target);
  return { text, sources };
});
run("verified.json", (input: { base: ChangeBase; proposed: Change | null; sources: SourceInput[] }) =>
  verifiedChange(input.base, input.proposed, input.sources),
);
run("resolve.json", (input: { chain: unknown[] }) => {
  const { stopped, ...rest } = resolve(input.chain);
  return { ...rest, stopped: stopped && { index: stopped.index, code: stopped.code } };
});
run("observe.json", (input: { chain: unknown[]; sources: SourceInput[]; actor: Actor; now: number }) =>
  observe(input.chain, input.sources, input.actor, input.now),
);
run("fold.json", (input: { chain: unknown[]; sources: SourceInput[]; now: number; covered: string[] }) =>
  fold(input.chain, input.sources, input.now, input.covered),
);
run("render.json", (input: { revision: HeaderRevision; base?: ChangeBase }) => renderObservation(input.revision, input.base));
run("records.json", (input: unknown) => parseHeaderRecord(input));
