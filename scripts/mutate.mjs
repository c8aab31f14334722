#!/usr/bin/env node
// pnpm mutate NAME: StrykerJS mutation testing for one package with its own vitest suite.
// Writes Stryker's JSON report (the mutation-testing-report schema) to reports/mutation/NAME.json
// and prints the score. Not part of CI: a run takes minutes per package.
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
const PACKAGES = ["driver", "remote", "usage", "header", "transcript", "frame", "envelope", "skills", "activation"];

const [name, ...flags] = process.argv.slice(2);
if (!name || !PACKAGES.includes(name)) {
  console.error(`usage: pnpm mutate NAME [--incremental [--force]]   (NAME one of: ${PACKAGES.join(", ")})`);
  process.exit(64);
}
const dir = join(root, "packages", name);
const report = join(root, "reports", "mutation", `${name}.json`);
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
  mutate: ["src/**/*.ts", "!src/**/*.test.ts", "!src/index.ts"],
  // event-recorder writes each mutant's result to reports/mutation/NAME-events/ as it is tested,
  // so the survivors of a long run can be read (and worked on) before it ends.
  reporters: ["json", "clear-text", "progress", "event-recorder"],
  jsonReporter: { fileName: report },
  eventReporter: { baseDir: join(root, "reports", "mutation", `${name}-events`) },
  concurrency: Number(process.env.STRYKER_CONCURRENCY ?? 2),
  timeoutMS: 10_000,
  tempDirName: join(root, "node_modules", ".stryker-tmp", name),
  // With --incremental, Stryker reuses the results kept here (gitignored, beside the report) for
  // every mutant whose code and covering tests did not change, so a re-run after adding tests
  // re-tests only what changed. --force with it re-tests everything and refreshes the file.
  incremental: flags.includes("--incremental"),
  incrementalFile: join(root, "reports", "mutation", `${name}.incremental.json`),
  force: flags.includes("--force"),
  cleanTempDir: "always",
  ...extra,
};
const configPath = join(root, "node_modules", ".stryker-tmp", `${name}.config.json`);
mkdirSync(dirname(configPath), { recursive: true });
writeFileSync(configPath, JSON.stringify(config, null, 2));

const run = spawnSync(join(root, "node_modules", ".bin", "stryker"), ["run", configPath], { cwd: dir, stdio: "inherit" });
if (run.status !== 0) process.exit(run.status ?? 1);

// The score as the issue counts it: killed / (killed + survived); timeouts count as killed
// (Stryker's own convention), no-coverage mutants as survived.
const files = JSON.parse(readFileSync(report, "utf8")).files;
const counts = { Killed: 0, Timeout: 0, Survived: 0, NoCoverage: 0, Ignored: 0, CompileError: 0, RuntimeError: 0 };
for (const file of Object.values(files)) for (const m of file.mutants) counts[m.status] = (counts[m.status] ?? 0) + 1;
const killed = counts.Killed + counts.Timeout;
const survived = counts.Survived + counts.NoCoverage;
const score = killed + survived === 0 ? 100 : (100 * killed) / (killed + survived);
console.log(`\n@klbr/${name}: mutation score ${score.toFixed(2)}% (killed ${killed}, survived ${survived}, ignored ${counts.Ignored}) -> ${report}`);
