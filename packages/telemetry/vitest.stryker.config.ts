import { defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config.ts";

// The suite `pnpm mutate telemetry` runs once per mutant (packages/telemetry/stryker.json points
// here): the unit tests beside the source. They need no collector: spans go to the SDK's in-memory
// exporter, and "the collector is down" is a loopback port nothing listens on. The suites that
// export to a real Jaeger (apps/host/test/telemetry*.e2e.test.ts) start hosts and are left out.
const UNIT = ["config", "counts", "recorder", "telemetry", "recorder-edges", "edges"];

// No per-test limit: on a loaded machine a slow test would otherwise count a mutant as killed;
// Stryker's own timeout (a Timeout, not a kill) bounds a hang.
const config = mergeConfig(base, defineConfig({ test: { testTimeout: 600_000 } }));
// Set, not merged: mergeConfig would add these to the shared include.
config.test!.include = UNIT.map((name) => `src/${name}.test.ts`);
export default config;
