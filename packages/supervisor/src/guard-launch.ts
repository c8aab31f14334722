import type { Duplex, Readable, Writable } from "node:stream";
import { minimalEnv } from "./minimal-env.js";
import { GUARD_SCRIPT, GUARD_STATUS_FD } from "./guard.js";
import { resolvePython } from "./python.js";
import type { TreeTag } from "./tagged.js";

/** The child fd on which the guard reads the command's environment (spawn with a fifth stdio pipe). */
export const GUARD_ENV_FD = 4;

/** How the command's environment reaches it past the programs that run on the host. */
export type EnvHandoff = "exec" | "bwrap";

/** What to spawn: the guard with the launcher environment, and the bytes to write on its env fd. */
export interface GuardLaunch {
  file: string;
  args: string[];
  /** The guard's own environment (and bwrap's, ssh's): never the command's. */
  env: Record<string, string>;
  /** The command's environment, NUL-separated `NAME=VALUE` entries, for {@link GUARD_ENV_FD}. */
  commandEnv: Buffer;
}

const TAG_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const TAG_VALUE = /^[0-9a-f]{32}$/;

/**
 * The environment of what runs on the host before any namespace exists (the guard's interpreter,
 * bwrap, ssh): the host's own C15 minimal base, without the operator's passed names and without
 * anything a cell set, plus the tree tags that find these processes again. A tag is a name and
 * 32 hex digits, so it can carry nothing a program would act on (a library path, an option).
 */
export function launcherEnv(tags: readonly TreeTag[], hostEnv: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env = minimalEnv([], hostEnv);
  for (const tag of tags) {
    if (!TAG_NAME.test(tag.name) || !TAG_VALUE.test(tag.value)) throw new RangeError(`not a tree tag: ${JSON.stringify(tag)}`);
    env[tag.name] = tag.value;
  }
  return env;
}

/** The tree tags among `env`'s entries (the host's extra variables for a worker: its host-tree tag). */
export function tagsIn(env: Record<string, string> | undefined): TreeTag[] {
  return Object.entries(env ?? {})
    .filter(([name, value]) => TAG_NAME.test(name) && TAG_VALUE.test(value))
    .map(([name, value]) => ({ name, value }));
}

/** `env` as NUL-separated entries. A name with `=` or a NUL anywhere cannot be passed: RangeError. */
export function encodeEnv(env: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (name === "" || name.includes("=") || name.includes("\0") || value.includes("\0")) {
      throw new RangeError(`environment entry ${JSON.stringify(name)} cannot be passed to a process`);
    }
    parts.push(Buffer.from(`${name}=${value}\0`));
  }
  return Buffer.concat(parts);
}

/**
 * Run `argv` with environment `commandEnv` under the guard, so that only the command gets that
 * environment: the guard starts with `launcher` and reads `commandEnv` on {@link GUARD_ENV_FD};
 * with `handoff: "bwrap"` (argv is a bwrap prefix and its command) bwrap too runs with `launcher`
 * and passes `commandEnv` into the sandbox (`--clearenv`, `--setenv`). Bound to this process as
 * the guard's parent.
 */
export function guardLaunch(
  argv: readonly string[],
  commandEnv: Record<string, string>,
  launcher: Record<string, string>,
  handoff: EnvHandoff = "exec",
  python: string = resolvePython(),
): GuardLaunch {
  const args = ["-I", "-S", GUARD_SCRIPT, "--status-fd", String(GUARD_STATUS_FD), "--parent", String(process.pid), "--env-fd", String(GUARD_ENV_FD)];
  if (handoff === "bwrap") args.push("--bwrap-env");
  return { file: python, args: [...args, "--", ...argv], env: launcher, commandEnv: encodeEnv(commandEnv) };
}

/** Write the command's environment on the guard's env pipe and close it (a guard already gone is not an error here). */
export function sendCommandEnv(stream: Readable | Writable | Duplex | null | undefined, commandEnv: Buffer): void {
  // An extra stdio "pipe" is a socket: typed as readable by execa, writable all the same.
  const pipe = stream as Writable | null | undefined;
  if (!pipe) return;
  pipe.on("error", () => undefined);
  pipe.end(commandEnv);
}
