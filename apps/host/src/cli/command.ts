import { isAbsolute, resolve } from "node:path";
import type { Command } from "commander";
import { HostError } from "../errors";
import { dataLayout, defaultDataDir } from "../paths";
import { describeFailure, reportFailure } from "./failure";

/** Global options every command shares, after `userPath` resolved them. */
export interface CommonOptions {
  dataDir?: string;
  workspace?: string;
}

/**
 * The directory the user typed the command in. Under `pnpm klbr ...` the process runs in the
 * package's directory, and pnpm keeps the caller's directory in INIT_CWD; only trust it when pnpm
 * is running our own script (a test run under `pnpm test` inherits INIT_CWD too).
 */
export function userDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const script = env.npm_lifecycle_script ?? "";
  if (env.INIT_CWD && /(^|[\s/])klbr(\.js)?(\s|$)/.test(script)) return env.INIT_CWD;
  return process.cwd();
}

/** A path from the command line, resolved against the user's directory. */
export function userPath(path: string): string {
  return isAbsolute(path) ? path : resolve(userDirectory(), path);
}

/** The command's own options merged over the global ones, paths resolved. */
export function optionsOf<T extends object>(cmd: Command): CommonOptions & T {
  const opts = cmd.optsWithGlobals() as CommonOptions & T;
  return {
    ...opts,
    ...(opts.dataDir !== undefined ? { dataDir: userPath(opts.dataDir) } : {}),
    ...(opts.workspace !== undefined ? { workspace: userPath(opts.workspace) } : {}),
  };
}

/** A command body: the parsed command (for its options) and its positional arguments; resolves to the exit status. */
export type Action = (command: Command, ...positional: string[]) => Promise<number>;

/** Run a command body; a thrown error becomes `klbr: CODE: message`, a hint line, and its exit status. */
export function run(action: Action) {
  return async (...args: unknown[]) => {
    // commander passes the positional arguments, then the options, then the command itself.
    const command = args.at(-1) as Command;
    const positional = args.slice(0, -2) as string[];
    try {
      process.exitCode = await action(command, ...positional);
    } catch (error) {
      let dataDir: string | undefined;
      try {
        dataDir = optionsOf(command).dataDir ?? defaultDataDir();
      } catch {
        dataDir = undefined;
      }
      const failure = describeFailure(error, { command: command.name(), ...(dataDir ? { dataDir, database: dataLayout(dataDir).database } : {}) });
      reportFailure(failure);
      process.exitCode = failure.exit;
    }
  };
}

/** A `--session` value: a C2 identifier, checked before any host is started (a usage error otherwise). */
export function sessionOption(session: string | undefined): string | undefined {
  if (session !== undefined && !/^[A-Za-z0-9_.-]{1,128}$/.test(session)) {
    throw new HostError("CLI_USAGE", `--session must be an identifier (1..128 of A-Z a-z 0-9 _ . -), got ${JSON.stringify(session)}`);
  }
  return session;
}

/** One command file's registration: adds its command to the program. */
export type Register = (program: Command) => void;
