import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { resolvePython } from "./python.js";

/**
 * The guard every process the supervisor (or a host's `workspace.run`) starts runs under: a tiny
 * stdlib Python parent that dies with the host (PR_SET_PDEATHSIG), is a child subreaper, kills
 * everything left below it when the command exits, and exits with the command's status.
 */
export const GUARD_SCRIPT = fileURLToPath(new URL("../guard/klbr_guard.py", import.meta.url));

/**
 * The child fd on which the guard reports `pid N` or `error ERRNO MESSAGE` (spawn with a fourth
 * stdio pipe); after `pid N`, `clean` once its final sweep left nothing below it.
 */
export const GUARD_STATUS_FD = 3;

/**
 * What the guard reported: the command's pid, or why it could not be executed (`reported`: the
 * guard said so; otherwise it ended without a word, e.g. the interpreter is not Python).
 */
export type GuardStatus = { pid: number } | { error: string; reported: boolean };

/** argv that runs `argv` under the guard, bound to this process as its parent. */
export function guardArgv(argv: readonly string[], python: string = resolvePython()): [string, ...string[]] {
  return [python, "-I", "-S", GUARD_SCRIPT, "--status-fd", String(GUARD_STATUS_FD), "--parent", String(process.pid), "--", ...argv];
}

/** Parse the guard's one status line. */
export function parseGuardStatus(text: string): GuardStatus {
  const line = text.split("\n", 1)[0] ?? "";
  const pid = /^pid (\d+)$/.exec(line);
  if (pid) return { pid: Number(pid[1]) };
  const error = /^error (\d+) (.*)$/.exec(line);
  if (error) return { error: error[2] || `errno ${error[1]}`, reported: true };
  return { error: line ? `unexpected guard status ${JSON.stringify(line)}` : "the guard exited without reporting the command", reported: false };
}

/** What the guard says on its status pipe over its life (see {@link watchGuard}). */
export interface GuardReport {
  /** Its first line: the command's pid or why it could not run. */
  status: Promise<GuardStatus>;
  /**
   * Resolves once the pipe ends: true when the guard said `clean` after the command's pid, i.e.
   * its final sweep killed and reaped every process below it. As the subreaper of the whole tree,
   * nothing of the tree can have left it: the host has no process of it to look for.
   */
  clean: Promise<boolean>;
}

/** Follow the guard's status pipe to its end: the status line, then whether it ended clean. */
export function watchGuard(stream: Readable | null | undefined): GuardReport {
  if (!stream) return { status: Promise.resolve({ error: "no guard status pipe", reported: false }), clean: Promise.resolve(false) };
  let text = "";
  let resolveStatus!: (status: GuardStatus) => void;
  const status = new Promise<GuardStatus>((resolve) => (resolveStatus = resolve));
  let statusSent = false;
  const clean = new Promise<boolean>((resolve) => {
    const finish = () => {
      if (!statusSent) resolveStatus(parseGuardStatus(text));
      statusSent = true;
      const lines = text.split("\n");
      // Exactly `pid N`, `clean`, and the end: anything else (a guard killed mid-sweep) is not clean.
      resolve(lines.length === 3 && /^pid \d+$/.test(lines[0]!) && lines[1] === "clean" && lines[2] === "");
      stream.destroy();
    };
    stream.on("data", (chunk: Buffer | string) => {
      text += chunk.toString();
      if (!statusSent && text.includes("\n")) {
        statusSent = true;
        resolveStatus(parseGuardStatus(text));
      }
      // A guard does not say more than two short lines: anything longer is not its report.
      if (text.length > 256) finish();
    });
    stream.once("end", finish);
    stream.once("close", finish);
    stream.once("error", finish);
  });
  return { status, clean };
}

/** Read the guard's status line from its status pipe (resolves once the line or the end arrived). */
export function readGuardStatus(stream: Readable | null | undefined): Promise<GuardStatus> {
  return watchGuard(stream).status;
}
