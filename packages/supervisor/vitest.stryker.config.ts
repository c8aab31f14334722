import { defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config.ts";

// The suite `pnpm mutate supervisor` runs once per mutant (packages/supervisor/stryker.json points
// here): the unit tests beside the source, and the process-tree tests (real short-lived children,
// a second or two). test/ starts Python workers and guards, many seconds each: per mutant on a
// shared 2-core machine that is hours, and the worker processes never see the active mutant.
const UNIT = [
  "ladder", "ladder-rungs", "limit-stop", "operation", "tree", "tree-edges", "live-output", "display", "inbound", "merged", "routes", "tail", "wire", "hello",
  "limits/verdict", "limits/verdict-edges", "limits/spec", "limits/discover", "limits/usage", "limits/cpu-watch", "limits/proc-tree", "limits/proc-tree-fake", "tree-walk", "tree-fake",
];

// No per-test limit: on a loaded machine a slow test would otherwise count a mutant as killed;
// Stryker's own timeout (a Timeout, not a kill) bounds a hang.
const config = mergeConfig(base, defineConfig({ test: { testTimeout: 600_000 } }));
// Set, not merged: mergeConfig would add these to the shared include (every test/ suite).
config.test!.include = UNIT.map((name) => `src/${name}.test.ts`);
export default config;
