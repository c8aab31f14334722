import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isRemoteError } from "./errors.js";
import { parseTarget, parseTargets, withTarget, withoutTarget, type Target } from "./targets.js";
import { readTargets, targetsPath, writeTargets } from "./targets-file.js";

// Every limit of a C14 target at its edge and one past it, and what each refusal says.
const base = {
  name: "t",
  ssh: { host: "h", user: null, port: 22, identity_file: null, known_hosts: "/kh" },
  python: "python3",
  workdir: "/w",
};
const ssh = (extra: Record<string, unknown>) => ({ ...base, ssh: { ...base.ssh, ...extra } });

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (isRemoteError(error)) return `${error.code}: ${error.message}`;
    throw error;
  }
  return "accepted";
}

describe("parseTarget limits", () => {
  it("name: 128 identifier characters, not 129", () => {
    expect(parseTarget({ ...base, name: "n".repeat(128) }).name).toBe("n".repeat(128));
    expect(parseTarget({ ...base, name: "A-z_0.9" }).name).toBe("A-z_0.9");
    expect(refusal(() => parseTarget({ ...base, name: "n".repeat(129) }))).toBe(`REMOTE_TARGET_INVALID: target: name "${"n".repeat(129)}" is not an identifier`);
    expect(refusal(() => parseTarget({ ...base, name: 7 }))).toBe("REMOTE_TARGET_INVALID: target: name 7 is not an identifier");
    expect(refusal(() => parseTarget({ ...base, name: "a/b" }))).toMatch(/is not an identifier$/);
  });

  it("host: 255 characters, not 256; never an option", () => {
    expect(parseTarget(ssh({ host: "h".repeat(255) })).ssh.host).toBe("h".repeat(255));
    expect(parseTarget(ssh({ host: "[::1]" })).ssh.host).toBe("[::1]");
    expect(parseTarget(ssh({ host: "fe80::1%eth0" })).ssh.host).toBe("fe80::1%eth0");
    expect(refusal(() => parseTarget(ssh({ host: "h".repeat(256) })))).toBe(`REMOTE_TARGET_INVALID: target "t": ssh.host "${"h".repeat(256)}" is not a host name or address`);
    expect(refusal(() => parseTarget(ssh({ host: "-p1" })))).toBe('REMOTE_TARGET_INVALID: target "t": ssh.host "-p1" is not a host name or address');
    expect(refusal(() => parseTarget(ssh({ host: 5 })))).toMatch(/ssh\.host 5 is not a host name/);
    expect(refusal(() => parseTarget(ssh({ host: "" })))).toMatch(/ssh\.host "" is not a host name/);
  });

  it("user: 64 characters, not 65; null or absent is ssh's default", () => {
    expect(parseTarget(ssh({ user: "u".repeat(64) })).ssh.user).toBe("u".repeat(64));
    expect(parseTarget(ssh({ user: "a.b@c-d" })).ssh.user).toBe("a.b@c-d");
    expect(refusal(() => parseTarget(ssh({ user: "u".repeat(65) })))).toBe(`REMOTE_TARGET_INVALID: target "t": ssh.user "${"u".repeat(65)}" is not a user name`);
    expect(refusal(() => parseTarget(ssh({ user: "-oX" })))).toMatch(/ssh\.user "-oX" is not a user name/);
    expect(refusal(() => parseTarget(ssh({ user: 0 })))).toMatch(/ssh\.user 0 is not a user name/);
    expect(refusal(() => parseTarget(ssh({ user: "" })))).toMatch(/ssh\.user "" is not a user name/);
  });

  it("port: an integer 1..65535", () => {
    expect(refusal(() => parseTarget(ssh({ port: 22.5 })))).toBe('REMOTE_TARGET_INVALID: target "t": ssh.port 22.5 is not a port (1..65535)');
    expect(refusal(() => parseTarget(ssh({ port: null })))).toBe("accepted");
    expect(parseTarget(ssh({ port: null })).ssh.port).toBe(22);
    expect(refusal(() => parseTarget(ssh({ port: -1 })))).toMatch(/ssh\.port -1 is not a port/);
  });

  it("python: 4096 characters, not 4097, no NUL or newline", () => {
    expect(parseTarget({ ...base, python: "p".repeat(4096) }).python).toBe("p".repeat(4096));
    expect(refusal(() => parseTarget({ ...base, python: "p".repeat(4097) }))).toMatch(/^REMOTE_TARGET_INVALID: target "t": python "p+" is not a command$/);
    expect(refusal(() => parseTarget({ ...base, python: "" }))).toBe('REMOTE_TARGET_INVALID: target "t": python "" is not a command');
    expect(refusal(() => parseTarget({ ...base, python: "py\nthon" }))).toMatch(/is not a command$/);
    expect(refusal(() => parseTarget({ ...base, python: "py\0" }))).toMatch(/is not a command$/);
    expect(refusal(() => parseTarget({ ...base, python: 3 }))).toBe('REMOTE_TARGET_INVALID: target "t": python 3 is not a command');
  });

  it("workdir: 4096 bytes, not 4097; trailing slashes dropped, the root kept", () => {
    expect(parseTarget({ ...base, workdir: `/${"w".repeat(4095)}` }).workdir).toHaveLength(4096);
    expect(refusal(() => parseTarget({ ...base, workdir: `/${"w".repeat(4096)}` }))).toMatch(/^REMOTE_TARGET_INVALID: target "t": workdir must be a directory path, got "\/w+"$/);
    // Bytes, not characters: 2048 two-byte characters are 4096 bytes, one more is over.
    expect(parseTarget({ ...base, workdir: "é".repeat(2048) }).workdir).toBe("é".repeat(2048));
    expect(refusal(() => parseTarget({ ...base, workdir: "é".repeat(2049) }))).toMatch(/workdir must be a directory path/);
    expect(refusal(() => parseTarget({ ...base, workdir: "/a\0" }))).toMatch(/workdir must be a directory path/);
    expect(refusal(() => parseTarget({ ...base, workdir: 1 }))).toBe('REMOTE_TARGET_INVALID: target "t": workdir must be a directory path, got 1');
    expect(parseTarget({ ...base, workdir: "/srv/klbr///" }).workdir).toBe("/srv/klbr");
    expect(parseTarget({ ...base, workdir: "rel/" }).workdir).toBe("rel");
    expect(parseTarget({ ...base, workdir: "/" }).workdir).toBe("/");
    expect(parseTarget({ ...base, workdir: "//" }).workdir).toBe("/");
  });

  it("identity_file and known_hosts: absolute paths without NUL or newline", () => {
    expect(parseTarget(ssh({ identity_file: "/k/id" })).ssh.identity_file).toBe("/k/id");
    for (const bad of ["k/id", "/k\nid", "/k\0id", 3]) {
      expect(refusal(() => parseTarget(ssh({ identity_file: bad })))).toBe(`REMOTE_TARGET_INVALID: target "t": ssh.identity_file must be an absolute path, got ${JSON.stringify(bad)}`);
      expect(refusal(() => parseTarget(ssh({ known_hosts: bad })))).toBe(`REMOTE_TARGET_INVALID: target "t": ssh.known_hosts must be an absolute path, got ${JSON.stringify(bad)}`);
    }
  });

  it("the shape: an object, no unknown key, no missing key", () => {
    expect(refusal(() => parseTarget(null))).toBe("REMOTE_TARGET_INVALID: target: must be an object, got null");
    expect(refusal(() => parseTarget([]))).toBe("REMOTE_TARGET_INVALID: target: must be an object, got []");
    expect(refusal(() => parseTarget("t"))).toBe('REMOTE_TARGET_INVALID: target: must be an object, got "t"');
    expect(refusal(() => parseTarget({ ...base, extra: 1 }))).toBe('REMOTE_TARGET_INVALID: target: unknown key "extra"');
    const { workdir: _w, ...noWorkdir } = base;
    expect(refusal(() => parseTarget(noWorkdir))).toBe('REMOTE_TARGET_INVALID: target: missing key "workdir"');
    const { host: _h, ...noHost } = base.ssh;
    expect(refusal(() => parseTarget({ ...base, ssh: noHost }))).toBe('REMOTE_TARGET_INVALID: target "t" ssh: missing key "host"');
    expect(refusal(() => parseTarget({ ...base, ssh: null }))).toBe('REMOTE_TARGET_INVALID: target "t" ssh: must be an object, got null');
    expect(refusal(() => parseTarget({ ...base, ssh: { ...base.ssh, x: 1 } }))).toBe('REMOTE_TARGET_INVALID: target "t" ssh: unknown key "x"');
  });
});

describe("parseTargets", () => {
  it("says what the whole file must be", () => {
    expect(refusal(() => parseTargets(null))).toBe("REMOTE_TARGETS_INVALID: targets.json must hold an object, got null");
    expect(refusal(() => parseTargets([]))).toBe("REMOTE_TARGETS_INVALID: targets.json must hold an object, got []");
    expect(refusal(() => parseTargets({}))).toBe('REMOTE_TARGETS_INVALID: targets.json must be {"targets": [...]}, got keys []');
    expect(refusal(() => parseTargets({ other: [] }))).toBe('REMOTE_TARGETS_INVALID: targets.json must be {"targets": [...]}, got keys ["other"]');
    expect(refusal(() => parseTargets({ targets: {} }))).toBe('REMOTE_TARGETS_INVALID: targets.json must be {"targets": [...]}, got keys ["targets"]');
    expect(refusal(() => parseTargets({ targets: [base, { ...base, name: "u" }, base] }))).toBe('REMOTE_TARGETS_INVALID: targets.json: target "t" appears twice');
    expect(refusal(() => parseTargets({ targets: [{ ...base, name: "" }] }))).toBe('REMOTE_TARGETS_INVALID: targets.json: target: name "" is not an identifier');
    expect(parseTargets({ targets: [base, { ...base, name: "u" }] }).targets.map((t) => t.name)).toEqual(["t", "u"]);
  });

  it("refuses a value that is no object for what it is, and counts only its own keys", () => {
    expect(refusal(() => parseTargets(5))).toBe("REMOTE_TARGETS_INVALID: targets.json must hold an object, got 5");
    expect(refusal(() => parseTargets("targets"))).toBe('REMOTE_TARGETS_INVALID: targets.json must hold an object, got "targets"');
    // One own key that is not "targets", whatever the prototype carries.
    const inherited = Object.assign(Object.create({ targets: [] }) as object, { other: [] });
    expect(refusal(() => parseTargets(inherited))).toBe('REMOTE_TARGETS_INVALID: targets.json must be {"targets": [...]}, got keys ["other"]');
  });

  it("withTarget replaces only when asked, and validates what it adds", () => {
    const file = { targets: [base as Target, { ...base, name: "u" } as Target] };
    expect(refusal(() => withTarget(file, base as Target))).toBe('REMOTE_TARGET_EXISTS: target "t" already exists');
    expect(withTarget(file, { ...base, name: "v" } as Target).targets.map((t) => t.name)).toEqual(["t", "u", "v"]);
    const replaced = withTarget(file, { ...base, python: "python3.12" } as Target, true);
    expect(replaced.targets.map((t) => [t.name, t.python])).toEqual([["u", "python3"], ["t", "python3.12"]]);
    expect(refusal(() => withTarget(file, { ...base, name: "bad name" } as Target))).toMatch(/^REMOTE_TARGET_INVALID: /);
    expect(withoutTarget(file, "t").targets.map((t) => t.name)).toEqual(["u"]);
    expect(refusal(() => withoutTarget(file, "zz"))).toBe('REMOTE_TARGET_NOT_FOUND: no target "zz" in targets.json');
  });
});

describe("targets.json on disk", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("is written as indented JSON with a final newline, and read back", () => {
    dir = mkdtempSync("/tmp/krt-");
    writeTargets(dir, { targets: [base as Target] });
    expect(readFileSync(targetsPath(dir), "utf8")).toBe(`${JSON.stringify({ targets: [base] }, null, 2)}\n`);
    expect(readTargets(dir)).toEqual({ targets: [base] });
    expect(readdirSync(dir)).toEqual(["targets.json"]);
  });

  it("a file that cannot be read, or is not JSON, names the file", () => {
    dir = mkdtempSync("/tmp/krt-");
    mkdirSync(targetsPath(dir));
    expect(refusal(() => readTargets(dir!))).toMatch(new RegExp(`^REMOTE_TARGETS_INVALID: cannot read ${targetsPath(dir)}: EISDIR`));
    rmSync(targetsPath(dir), { recursive: true });
    expect(refusal(() => writeTargets(dir!, { targets: [{ ...base, name: "" } as Target] }))).toMatch(/^REMOTE_TARGETS_INVALID: /);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("a write that fails leaves no temporary file", () => {
    dir = mkdtempSync("/tmp/krt-");
    mkdirSync(targetsPath(dir));
    mkdirSync(join(targetsPath(dir), "x"));
    // The rename onto a non-empty directory fails: the temporary file is removed.
    expect(() => writeTargets(dir!, { targets: [] })).toThrow(/ENOTEMPTY|EISDIR|EEXIST/);
    expect(readdirSync(dir)).toEqual(["targets.json"]);
  });

  it("the temporary file is targets.json.<12 hex digits>.tmp beside it (named by the failed rename)", () => {
    dir = mkdtempSync("/tmp/krt-");
    mkdirSync(join(targetsPath(dir), "x"), { recursive: true });
    expect(() => writeTargets(dir!, { targets: [] })).toThrow(new RegExp(`'${targetsPath(dir)}\\.[0-9a-f]{12}\\.tmp' -> '${targetsPath(dir)}'`));
  });

  it("a temporary file that cannot be created is that error, not one from the clean-up", () => {
    dir = mkdtempSync("/tmp/krt-");
    const missing = join(dir, "no-such-dir");
    let caught: NodeJS.ErrnoException | undefined;
    try {
      writeTargets(missing, { targets: [] });
    } catch (error) {
      caught = error as NodeJS.ErrnoException;
    }
    expect([caught?.code, caught?.syscall]).toEqual(["ENOENT", "open"]);
  });

  it("a file that is not JSON says so, with the parser's reason", () => {
    dir = mkdtempSync("/tmp/krt-");
    writeFileSync(targetsPath(dir), "{");
    let reason = "";
    try {
      JSON.parse("{");
    } catch (error) {
      reason = (error as Error).message;
    }
    expect(refusal(() => readTargets(dir!))).toBe(`REMOTE_TARGETS_INVALID: ${targetsPath(dir)} is not JSON: ${reason}`);
  });
});
