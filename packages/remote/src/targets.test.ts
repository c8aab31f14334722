import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isRemoteError } from "./errors.js";
import { findTarget, parseTarget, parseTargets, withTarget, withoutTarget } from "./targets.js";
import { readTargets, targetsPath, writeTargets } from "./targets-file.js";

const entry = {
  name: "loop",
  ssh: { host: "127.0.0.1", user: "root", port: 22, identity_file: "/k/id", known_hosts: "/k/kh" },
  python: "python3",
  workdir: "/tmp/w",
};

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (isRemoteError(error)) return error.code;
    throw error;
  }
  return undefined;
}

describe("parseTarget", () => {
  it("accepts the C14 shape and keeps it as is", () => {
    expect(parseTarget(entry)).toEqual(entry);
  });

  it("takes a workdir relative to the remote home, or long, or with a colon (the socket then goes to /tmp)", () => {
    for (const workdir of ["klbr-work", `/${"w".repeat(200)}`, "/a:b"]) expect(parseTarget({ ...entry, workdir }).workdir).toBe(workdir);
  });

  it("defaults python, user, port (22) and identity_file", () => {
    const { python: _p, ...rest } = entry;
    expect(parseTarget({ ...rest, ssh: { host: "h", known_hosts: "/kh" } })).toEqual({
      ...entry,
      ssh: { host: "h", user: null, port: 22, identity_file: null, known_hosts: "/kh" },
    });
  });

  it.each([
    ["an unknown key", { ...entry, extra: 1 }],
    ["an unknown ssh key", { ...entry, ssh: { ...entry.ssh, proxy: "x" } }],
    ["a name that is not an identifier", { ...entry, name: "a b" }],
    ["a host that is an option", { ...entry, ssh: { ...entry.ssh, host: "-oProxyCommand=x" } }],
    ["a host with a space", { ...entry, ssh: { ...entry.ssh, host: "a b" } }],
    ["port 0", { ...entry, ssh: { ...entry.ssh, port: 0 } }],
    ["a string port", { ...entry, ssh: { ...entry.ssh, port: "22" } }],
    ["no known_hosts", { ...entry, ssh: { ...entry.ssh, known_hosts: undefined } }],
    ["a relative known_hosts", { ...entry, ssh: { ...entry.ssh, known_hosts: "kh" } }],
    ["an empty workdir", { ...entry, workdir: "" }],
    ["a workdir with a newline", { ...entry, workdir: "/a\nb" }],
  ])("refuses %s", (_what, value) => {
    expect(code(() => parseTarget(value))).toBe("REMOTE_TARGET_INVALID");
  });
});

describe("the targets file", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("an absent file is no target; add, find, remove; written 0600", () => {
    dir = mkdtempSync("/tmp/krt-");
    expect(readTargets(dir)).toEqual({ targets: [] });
    writeTargets(dir, withTarget(readTargets(dir), entry));
    expect(statSync(targetsPath(dir)).mode & 0o777).toBe(0o600);
    expect(findTarget(readTargets(dir), "loop")).toEqual(entry);
    expect(code(() => withTarget(readTargets(dir!), entry))).toBe("REMOTE_TARGET_EXISTS");
    writeTargets(dir, withoutTarget(readTargets(dir), "loop"));
    expect(code(() => findTarget(readTargets(dir!), "loop"))).toBe("REMOTE_TARGET_NOT_FOUND");
    expect(code(() => withoutTarget(readTargets(dir!), "loop"))).toBe("REMOTE_TARGET_NOT_FOUND");
  });

  it("a malformed file, a duplicate name or another top-level key is REMOTE_TARGETS_INVALID", () => {
    dir = mkdtempSync("/tmp/krt-");
    writeFileSync(join(dir, "targets.json"), "{");
    expect(code(() => readTargets(dir!))).toBe("REMOTE_TARGETS_INVALID");
    expect(code(() => parseTargets({ targets: [entry, entry] }))).toBe("REMOTE_TARGETS_INVALID");
    expect(code(() => parseTargets({ targets: [], more: 1 }))).toBe("REMOTE_TARGETS_INVALID");
    expect(code(() => parseTargets({ targets: [{ ...entry, name: "" }] }))).toBe("REMOTE_TARGETS_INVALID");
  });
});
