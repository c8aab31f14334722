import { defineConfig, type Options } from "tsup";

/** The one build every package reuses: ESM only, typed, one bundle per entry. */
export function packageBuild(entry: string[] = ["src/index.ts"], extra: Options = {}) {
  return defineConfig({
    entry,
    format: ["esm"],
    target: "node20",
    platform: "node",
    dts: true,
    sourcemap: true,
    clean: true,
    splitting: false,
    ...extra,
  });
}
