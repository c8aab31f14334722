import type { Target } from "./targets.js";

/** A Unix-socket forward: connections to `remote` (on the target) reach `local` (here). */
export interface SocketForward {
  remote: string;
  local: string;
}

/** Options of {@link sshArgv}. */
export interface SshArgvOptions {
  /** The one forward this connection carries (`-R remote:local`); none by default. */
  forward?: SocketForward;
  /** The ssh program (default `ssh`, found on PATH). */
  ssh?: string;
}

const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** Quote one word for a POSIX shell (the remote side runs the command through the user's shell). */
export function shellQuote(word: string): string {
  if (SAFE_WORD.test(word)) return word; // SAFE_WORD needs one character: "" is quoted
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Quote every word and join them: one remote command line. */
export function shellJoin(words: readonly string[]): string {
  return words.map(shellQuote).join(" ");
}

/**
 * The argv of the system's OpenSSH client for one remote command on `target`. Everything is on
 * the command line and no configuration file is read (`-F none`), so the target alone decides
 * how the host connects: BatchMode (no prompt, ever), the target's known_hosts and nothing else
 * (StrictHostKeyChecking yes, no global file, never updated), no agent or X11 forwarding, no
 * connection sharing, no tty, no escape character, and no forward but the one asked for
 * (ExitOnForwardFailure: a forward the server refuses fails the connection instead of leaving
 * a worker nobody can reach). Keep-alives notice a dead peer within about 45 s.
 */
export function sshArgv(target: Target, remoteCommand: string, opts: SshArgvOptions = {}): string[] {
  const { ssh } = target;
  const o = (option: string) => ["-o", option];
  const argv = [
    opts.ssh ?? "ssh",
    "-F", "none",
    "-T", "-x", "-a",
    "-e", "none",
    ...o("BatchMode=yes"),
    ...o("StrictHostKeyChecking=yes"),
    ...o(`UserKnownHostsFile=${ssh.known_hosts}`),
    ...o("GlobalKnownHostsFile=none"),
    ...o("UpdateHostKeys=no"),
    ...o("CheckHostIP=no"),
    ...o("ForwardAgent=no"),
    ...o("ForwardX11=no"),
    ...o("ControlMaster=no"),
    ...o("ControlPath=none"),
    ...o("PermitLocalCommand=no"),
    ...o("ExitOnForwardFailure=yes"),
    ...o("ServerAliveInterval=15"),
    ...o("ServerAliveCountMax=3"),
    ...o("ConnectTimeout=15"),
    ...o("LogLevel=ERROR"),
    "-p", String(ssh.port),
  ];
  if (ssh.user !== null) argv.push("-l", ssh.user);
  if (ssh.identity_file !== null) argv.push(...o("IdentitiesOnly=yes"), "-i", ssh.identity_file);
  if (opts.forward) argv.push("-R", `${opts.forward.remote}:${opts.forward.local}`);
  argv.push("--", ssh.host, remoteCommand);
  return argv;
}
