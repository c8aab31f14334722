#!/usr/bin/env node
// pnpm mutate NAME [--mutate=a.ts,b.ts [--tag=T]]: StrykerJS mutation testing for one package with
// its own vitest suite. Writes Stryker's JSON report (the mutation-testing-report schema) to
// reports/mutation/NAME.json (NAME-T.json with a tag) and prints the score, overall and per file.
// Not part of CI: a run takes minutes per package.
//
// host and supervisor are too large for one run on a shared machine: --mutate names the files
// (relative to the package, comma-separated) and --tag keeps that set's report and incremental
// file apart from another set's (Stryker's incremental file forgets files outside the run).
//
// Stryker runs in place (inPlace: true): the packages import ../../vitest.shared.ts and
// ../../test-support, which a sandbox copy of one package directory would not have. Stryker
// restores every mutated file when it ends, also on Ctrl-C; do not edit the package meanwhile.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** The packages whose suites are fast enough to run once per mutant. */
const PACKAGES = ["driver", "remote", "usage", "header", "transcript", "frame", "envelope", "skills", "activation", "telemetry"];
/** Larger ones, run a few files at a time (--mutate) over the suite their stryker.json names. */
const LARGE = { host: "apps/host", supervisor: "packages/supervisor" };

const [name, ...flags] = process.argv.slice(2);
if (!name || !(PACKAGES.includes(name) || name in LARGE)) {
  console.error(`usage: pnpm mutate NAME [--incremental [--force]] [--mutate=FILES --tag=T]   (NAME one of: ${[...PACKAGES, ...Object.keys(LARGE)].join(", ")})`);
  process.exit(64);
}
const flag = (key) => flags.find((f) => f.startsWith(`--${key}=`))?.slice(key.length + 3);
const mutateFiles = flag("mutate")?.split(",").filter(Boolean);
const tag = flag("tag");
const stem = tag ? `${name}-${tag}` : name;
const dir = join(root, LARGE[name] ?? join("packages", name));
const report = join(root, "reports", "mutation", `${stem}.json`);
mkdirSync(dirname(report), { recursive: true });

// A package may add to the config (e.g. tests that need a real server excluded from the per-mutant
// run) in packages/NAME/stryker.json.
const extraPath = join(dir, "stryker.json");
const extra = existsSync(extraPath) ? JSON.parse(readFileSync(extraPath, "utf8")) : {};
const config = {
  $schema: join(root, "node_modules/@stryker-mutator/core/schema/stryker-schema.json"),
  packageManager: "pnpm",
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "vitest.config.ts", related: true },
  coverageAnalysis: "perTest",
  inPlace: true,
  mutate: mutateFiles ?? ["src/**/*.ts", "!src/**/*.test.ts", "!src/index.ts"],
  // event-recorder writes each mutant's result to reports/mutation/NAME-events/ as it is tested,
  // so the survivors of a long run can be read (and worked on) before it ends.
  reporters: ["json", "clear-text", "progress", "event-recorder"],
  jsonReporter: { fileName: report },
  eventReporter: { baseDir: join(root, "reports", "mutation", `${stem}-events`) },
  concurrency: Number(process.env.STRYKER_CONCURRENCY ?? 2),
  timeoutMS: 10_000,
  tempDirName: join(root, "node_modules", ".stryker-tmp", stem),
  // With --incremental, Stryker reuses the results kept here (gitignored, beside the report) for
  // every mutant whose code and covering tests did not change, so a re-run after adding tests
  // re-tests only what changed. --force with it re-tests everything and refreshes the file.
  incremental: flags.includes("--incremental"),
  incrementalFile: join(root, "reports", "mutation", `${stem}.incremental.json`),
  force: flags.includes("--force"),
  cleanTempDir: "always",
  ...extra,
};
const configPath = join(root, "node_modules", ".stryker-tmp", `${stem}.config.json`);
mkdirSync(dirname(configPath), { recursive: true });
writeFileSync(configPath, JSON.stringify(config, null, 2));

const run = spawnSync(join(root, "node_modules", ".bin", "stryker"), ["run", configPath], { cwd: dir, stdio: "inherit" });
if (run.status !== 0) process.exit(run.status ?? 1);

// The score as the issue counts it: killed / (killed + survived); timeouts count as killed
// (Stryker's own convention), no-coverage mutants as survived.
const files = JSON.parse(readFileSync(report, "utf8")).files;
function score(mutants) {
  const counts = { Killed: 0, Timeout: 0, Survived: 0, NoCoverage: 0, Ignored: 0, CompileError: 0, RuntimeError: 0 };
  for (const m of mutants) counts[m.status] = (counts[m.status] ?? 0) + 1;
  const killed = counts.Killed + counts.Timeout;
  const survived = counts.Survived + counts.NoCoverage;
  const pct = killed + survived === 0 ? 100 : (100 * killed) / (killed + survived);
  return `${pct.toFixed(2)}% (killed ${killed}, survived ${survived}, ignored ${counts.Ignored})`;
}
for (const [path, file] of Object.entries(files)) console.log(`  ${path}: ${score(file.mutants)}`);
console.log(`\n@klbr/${name}${tag ? ` [${tag}]` : ""}: mutation score ${score(Object.values(files).flatMap((f) => f.mutants))} -> ${report}`);
