// Shared-vector loading for the packages' tests: fixtures/ lives at the repository root, so the
// tests that read it run from a checkout of this repository.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** One shared vector: an expected value or an expected error code. */
export interface Vector {
  description: string;
  input: unknown;
  expected?: unknown;
  error?: { code: string };
}

/** The absolute path of fixtures/<folder>/<name>. */
export function fixturePath(folder: string, name = ""): string {
  return fileURLToPath(new URL(`../fixtures/${folder}/${name}`, import.meta.url));
}

/** Loads fixtures/<folder>/<name>; a missing, malformed or empty file fails the run. */
export function loadVectors(folder: string, name: string): Vector[] {
  const path = fixturePath(folder, name);
  const data: unknown = JSON.parse(readFileSync(path, "utf8"));
  const cases = (Array.isArray(data) ? data : (data as { cases: unknown }).cases) as Vector[];
  if (!Array.isArray(cases) || cases.length === 0) throw new Error(`${path} holds no cases`);
  for (const c of cases) {
    if (typeof c.description !== "string" || ("expected" in c) === ("error" in c)) {
      throw new Error(`${path}: malformed case ${JSON.stringify(c).slice(0, 120)}`);
    }
  }
  return cases;
}

/** Runs `fn` and returns the error code it threw, or fails when it did not throw. */
export function thrownCode(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as { code?: string }).code ?? `no code: ${String(error)}`;
  }
  throw new Error("expected a throw");
}

/** The JSON files in fixtures/<folder>/, sorted. */
export function vectorFiles(folder: string): string[] {
  return readdirSync(fixturePath(folder))
    .filter((name) => name.endsWith(".json"))
    .sort();
}
