// Bundle a test child once (our src through the @klbr/source condition) so plain node runs it:
// many processes each starting a TypeScript loader would spend the test in start-up.
import { fork, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "tsup";

const PACKAGE = fileURLToPath(new URL("../../", import.meta.url));

/** A message a child sends: which phase it reached, plus its result fields. */
export type ChildMessage = { phase: string; pid: number; [key: string]: unknown };

/**
 * Bundle `test/helpers/<name>.ts` into node_modules/.cache (so better-sqlite3 and drizzle-orm
 * resolve from this package); returns the script path and a cleanup.
 */
export async function bundleChild(name: string): Promise<{ script: string; dispose: () => void }> {
  const out = path.join(PACKAGE, "node_modules", ".cache", `klbr-activation-${name}-${process.pid}`);
  await build({
    entry: { [name]: path.join(PACKAGE, "test", "helpers", `${name}.ts`) },
    format: ["esm"],
    outDir: out,
    platform: "node",
    target: "node20",
    dts: false,
    sourcemap: false,
    silent: true,
    config: false,
    external: ["better-sqlite3", "drizzle-orm"],
    esbuildOptions(options) {
      options.conditions = ["@klbr/source"];
    },
  });
  return { script: path.join(out, `${name}.js`), dispose: () => fs.rmSync(out, { recursive: true, force: true }) };
}

/** Fork `count` children of `script` with per-child argv. */
export function forkAll(script: string, count: number, argv: (i: number) => string[]): ChildProcess[] {
  return Array.from({ length: count }, (_, i) => fork(script, argv(i), { execArgv: [], stdio: ["ignore", "inherit", "inherit", "ipc"] }));
}

/** Collect one message of `phase` from every child. */
export function all(children: ChildProcess[], phase: string): Promise<ChildMessage[]> {
  return Promise.all(
    children.map(
      (child) =>
        new Promise<ChildMessage>((resolve, reject) => {
          const onMessage = (m: ChildMessage) => {
            if (m.phase !== phase) return;
            child.off("message", onMessage);
            resolve(m);
          };
          child.on("message", onMessage);
          // "close", not "exit": exit can be emitted before the child's last IPC messages are read.
          child.once("close", (code) => reject(new Error(`child ${child.pid} exited with ${code} before "${phase}"`)));
        }),
    ),
  );
}

/** Wait until every child has exited. */
export function exited(children: ChildProcess[]): Promise<unknown> {
  return Promise.all(children.map((c) => (c.exitCode !== null || c.signalCode !== null ? null : new Promise((r) => c.once("exit", r)))));
}
