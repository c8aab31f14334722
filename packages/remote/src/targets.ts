import { RemoteError } from "./errors.js";

/** How a target is reached: every field is passed to the system's ssh explicitly (C14). */
export interface SshEndpoint {
  host: string;
  user: string | null;
  port: number;
  /** Private key file; null lets ssh use its defaults. */
  identity_file: string | null;
  /** The only known_hosts file checked (StrictHostKeyChecking yes). */
  known_hosts: string;
}

/** One entry of `<data>/targets.json` (C14). */
export interface Target {
  name: string;
  ssh: SshEndpoint;
  /** The remote interpreter (a command name or a path). */
  python: string;
  /** Remote directory holding `klbr-<digest>` runtimes (relative: to the remote user's home). */
  workdir: string;
}

/** The whole `targets.json` document. */
export interface TargetsFile {
  targets: Target[];
}

/** C2 identifiers. */
const IDENTIFIER = /^[A-Za-z0-9_.-]{1,128}$/;
/** A host name or address ssh takes as a destination: never an option, never a shell word break. */
const HOST = /^[A-Za-z0-9_.:%[\]-]{1,255}$/;
const USER = /^[A-Za-z0-9_.][A-Za-z0-9_.@-]{0,63}$/;


function fail(where: string, message: string): never {
  throw new RemoteError("REMOTE_TARGET_INVALID", `${where}: ${message}`);
}

function path(where: string, value: unknown, key: string): string {
  if (typeof value !== "string" || !value.startsWith("/") || value.includes("\0") || value.includes("\n")) {
    fail(where, `${key} must be an absolute path, got ${JSON.stringify(value)}`);
  }
  return value;
}

function exactKeys(where: string, value: unknown, keys: string[], optional: string[]): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) fail(where, `must be an object, got ${JSON.stringify(value)}`);
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) if (!keys.includes(key)) fail(where, `unknown key ${JSON.stringify(key)}`);
  for (const key of keys) if (!(key in record) && !optional.includes(key)) fail(where, `missing key ${JSON.stringify(key)}`);
  return record;
}

/** Validate one target (unknown keys fail; `user`, `identity_file` may be null, `port` defaults to 22, `python` defaults to python3). */
export function parseTarget(value: unknown): Target {
  const top = exactKeys("target", value, ["name", "ssh", "python", "workdir"], ["python"]);
  const name = top.name;
  if (typeof name !== "string" || !IDENTIFIER.test(name)) fail("target", `name ${JSON.stringify(name)} is not an identifier`);
  const where = `target ${JSON.stringify(name)}`;
  const ssh = exactKeys(`${where} ssh`, top.ssh, ["host", "user", "port", "identity_file", "known_hosts"], ["user", "port", "identity_file"]);
  // ssh's own default when the file leaves the port out.
  const port = ssh.port ?? 22;
  if (typeof ssh.host !== "string" || !HOST.test(ssh.host) || ssh.host.startsWith("-")) fail(where, `ssh.host ${JSON.stringify(ssh.host)} is not a host name or address`);
  const user = ssh.user ?? null;
  if (user !== null && (typeof user !== "string" || !USER.test(user))) fail(where, `ssh.user ${JSON.stringify(user)} is not a user name`);
  if (!Number.isInteger(port) || (port as number) < 1 || (port as number) > 65535) fail(where, `ssh.port ${JSON.stringify(port)} is not a port (1..65535)`);
  const identity = ssh.identity_file ?? null;
  const python = top.python ?? "python3";
  if (typeof python !== "string" || python.length === 0 || python.length > 4096 || /[\0\n]/.test(python)) fail(where, `python ${JSON.stringify(python)} is not a command`);
  const rawWorkdir = top.workdir;
  if (typeof rawWorkdir !== "string" || rawWorkdir.length === 0 || Buffer.byteLength(rawWorkdir) > 4096 || /[\0\n]/.test(rawWorkdir)) {
    fail(where, `workdir must be a directory path, got ${JSON.stringify(rawWorkdir)}`);
  }
  const workdir = rawWorkdir.replace(/(.)\/+$/, "$1");
  return {
    name,
    ssh: {
      host: ssh.host,
      user: user as string | null,
      port: port as number,
      identity_file: identity === null ? null : path(where, identity, "ssh.identity_file"),
      known_hosts: path(where, ssh.known_hosts, "ssh.known_hosts"),
    },
    python,
    workdir,
  };
}

/** Validate a whole `targets.json` value; names are unique. */
export function parseTargets(value: unknown): TargetsFile {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new RemoteError("REMOTE_TARGETS_INVALID", `targets.json must hold an object, got ${JSON.stringify(value)}`);
  }
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== "targets" || !Array.isArray((value as TargetsFile).targets)) {
    throw new RemoteError("REMOTE_TARGETS_INVALID", `targets.json must be {"targets": [...]}, got keys ${JSON.stringify(keys)}`);
  }
  const targets: Target[] = [];
  for (const entry of (value as TargetsFile).targets) {
    let target: Target;
    try {
      target = parseTarget(entry);
    } catch (error) {
      throw new RemoteError("REMOTE_TARGETS_INVALID", `targets.json: ${(error as Error).message}`);
    }
    if (targets.some((t) => t.name === target.name)) throw new RemoteError("REMOTE_TARGETS_INVALID", `targets.json: target ${JSON.stringify(target.name)} appears twice`);
    targets.push(target);
  }
  return { targets };
}

/** The target called `name`, or REMOTE_TARGET_NOT_FOUND. */
export function findTarget(file: TargetsFile, name: string): Target {
  const target = file.targets.find((t) => t.name === name);
  if (!target) throw new RemoteError("REMOTE_TARGET_NOT_FOUND", `no target ${JSON.stringify(name)} in targets.json`);
  return target;
}

/** A copy of `file` with `target` added (REMOTE_TARGET_EXISTS unless `replace`). */
export function withTarget(file: TargetsFile, target: Target, replace = false): TargetsFile {
  const valid = parseTarget(target);
  const exists = file.targets.some((t) => t.name === valid.name);
  if (exists && !replace) throw new RemoteError("REMOTE_TARGET_EXISTS", `target ${JSON.stringify(valid.name)} already exists`);
  return { targets: [...file.targets.filter((t) => t.name !== valid.name), valid] };
}

/** A copy of `file` without the target `name` (REMOTE_TARGET_NOT_FOUND when absent). */
export function withoutTarget(file: TargetsFile, name: string): TargetsFile {
  findTarget(file, name);
  return { targets: file.targets.filter((t) => t.name !== name) };
}
