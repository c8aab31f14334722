import { execa } from "execa";
import { RemoteError } from "./errors.js";
import { sshArgv } from "./ssh-argv.js";
import type { Target } from "./targets.js";

/** What a one-shot remote command left. */
export interface SshResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Turn ssh's own failure (exit 255, as Ansible reads it) into a RemoteError naming the cause; null when ssh itself succeeded. */
export function sshFailure(target: Target, exitCode: number | undefined, stderr: string): RemoteError | null {
  if (exitCode !== 255 && exitCode !== undefined) return null;
  const said = stderr.trim().split("\n").slice(-3).join(" | ") || "no message";
  const where = `target ${JSON.stringify(target.name)} (${target.ssh.host}:${target.ssh.port})`;
  if (/Host key verification failed|HOST IDENTIFICATION HAS CHANGED|host key .*(not known|mismatch)/i.test(stderr)) {
    return new RemoteError("REMOTE_HOST_KEY_MISMATCH", `${where}: its host key is not the one in ${target.ssh.known_hosts}: ${said}`);
  }
  if (/remote port forwarding failed/i.test(stderr)) {
    return new RemoteError(
      "REMOTE_FORWARD_REFUSED",
      `${where}: the server refused the worker's Unix-socket forward (its sshd needs AllowStreamLocalForwarding and AllowTcpForwarding not "no"): ${said}`,
    );
  }
  if (/Permission denied/i.test(stderr)) return new RemoteError("REMOTE_AUTH_FAILED", `${where}: authentication failed: ${said}`);
  return new RemoteError("REMOTE_CONNECT_FAILED", `${where}: ssh failed: ${said}`);
}

/**
 * Run `remoteCommand` on `target` once. `converse` gets each stdout line as it arrives and may
 * answer on stdin (the install exchange); stdin is closed when it returns `"end"` or at the end.
 * ssh's own failures become RemoteErrors; the command's exit status is the caller's to read.
 */
export async function sshRun(
  target: Target,
  remoteCommand: string,
  converse?: (line: string, stdin: NodeJS.WritableStream) => "end" | void,
  opts: { timeoutMs?: number } = {},
): Promise<SshResult> {
  const [file, ...args] = sshArgv(target, remoteCommand);
  const child = execa(file!, args, {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    reject: false,
    stripFinalNewline: false,
    timeout: opts.timeoutMs ?? 120_000,
    killSignal: "SIGKILL",
  });
  let pending = "";
  let ended = false;
  child.stdout.on("data", (chunk: Buffer) => {
    if (ended || !converse) return;
    pending += chunk.toString("utf8");
    let newline;
    while (!ended && (newline = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (converse(line, child.stdin) === "end") {
        ended = true;
        child.stdin.end();
      }
    }
  });
  if (!converse) child.stdin.end();
  const result = await child;
  const stderr: string = result.stderr;
  if (result.timedOut) throw new RemoteError("REMOTE_CONNECT_FAILED", `target ${JSON.stringify(target.name)}: no answer within ${opts.timeoutMs ?? 120_000} ms`);
  if (result.failed && result.exitCode === undefined) {
    throw new RemoteError("REMOTE_CONNECT_FAILED", `cannot run ssh: ${result.shortMessage ?? result.message}`);
  }
  const failure = sshFailure(target, result.exitCode, stderr);
  if (failure) throw failure;
  return { exitCode: result.exitCode ?? 0, stdout: result.stdout, stderr };
}
