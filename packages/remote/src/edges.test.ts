import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { collectRuntime } from "./bundle.js";
import { isRemoteError, RemoteError } from "./errors.js";
import { KEEPER_PID_PREFIX, keeperPid, remoteSocketPath, startRemoteWorker } from "./start.js";
import { parseTarget } from "./targets.js";

// Limits pinned at the edge and one past it (issue 25).
const entry = (port: unknown) => ({
  name: "edge",
  ssh: { host: "127.0.0.1", user: null, port, identity_file: null, known_hosts: "/k/kh" },
  workdir: "/srv/klbr",
});

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (isRemoteError(error)) return `${error.code}: ${error.message}`;
    throw error;
  }
  return "accepted";
}

describe("ssh.port", () => {
  it("accepts 1 and 65535, refuses 0 and 65536 naming the port", () => {
    expect(parseTarget(entry(1)).ssh.port).toBe(1);
    expect(parseTarget(entry(65535)).ssh.port).toBe(65535);
    expect(refusal(() => parseTarget(entry(65536)))).toMatch(/ssh\.port 65536 is not a port \(1\.\.65535\)/);
    expect(refusal(() => parseTarget(entry(0)))).toMatch(/ssh\.port 0 is not a port/);
  });
});

describe("remoteSocketPath", () => {
  const random = "0123456789abcdef01234567";
  // `${workdir}/klbr-r-${random}.sock` is workdir + 37 bytes.
  const suffix = `/klbr-r-${random}.sock`.length;

  it("keeps a 107-byte path in the workdir and moves a 108-byte one to /tmp", () => {
    const at107 = `/${"w".repeat(107 - suffix - 1)}`;
    const at108 = `/${"w".repeat(108 - suffix - 1)}`;
    expect(Buffer.byteLength(`${at107}/klbr-r-${random}.sock`)).toBe(107);
    expect(remoteSocketPath(at107, random)).toBe(`${at107}/klbr-r-${random}.sock`);
    expect(Buffer.byteLength(`${at108}/klbr-r-${random}.sock`)).toBe(108);
    expect(remoteSocketPath(at108, random)).toBe(`/tmp/klbr-r-${random}.sock`);
  });

  it("counts bytes, not characters: a multi-byte workdir that fits in characters but not in bytes goes to /tmp", () => {
    const chars = `/${"é".repeat(107 - suffix - 1)}`; // 107 characters, more bytes
    expect(remoteSocketPath(chars, random)).toBe(`/tmp/klbr-r-${random}.sock`);
  });
});

describe("collectRuntime (edges)", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("skips a __pycache__ directory whatever it holds, not only its .pyc files", () => {
    dir = mkdtempSync("/tmp/krb-");
    for (const [path, text] of [
      ["klbr/worker/__main__.py", "main"],
      ["klbr/__pycache__/notes.py", "not bytecode, but in a cache"],
      ["klbr/worker/__pycache__/x.txt", "likewise"],
    ]) {
      mkdirSync(join(dir, path!, ".."), { recursive: true });
      writeFileSync(join(dir, path!), text!);
    }
    expect(collectRuntime(dir).files.map((f) => f.path)).toEqual(["klbr/worker/__main__.py"]);
  });

  it("returns the files sorted by name bytes, not in the order the walk visits them", () => {
    // Node lists a directory sorted, so a depth-first walk visits klbr/a/x.py before klbr/a.py
    // ("a" < "a.py"); by bytes "klbr/a.py" comes first ("." is 0x2e, "/" is 0x2f).
    dir = mkdtempSync("/tmp/krb-");
    for (const path of ["klbr/worker/__main__.py", "klbr/a/x.py", "klbr/a.py"]) {
      mkdirSync(join(dir, path, ".."), { recursive: true });
      writeFileSync(join(dir, path), path);
    }
    expect(collectRuntime(dir).files.map((f) => f.path)).toEqual(["klbr/a.py", "klbr/a/x.py", "klbr/worker/__main__.py"]);
  });
});

describe("RemoteError", () => {
  it("is named RemoteError, with its code and message", () => {
    const error = new RemoteError("REMOTE_START_FAILED", "m");
    expect(error.name).toBe("RemoteError");
    expect(String(error)).toBe("RemoteError: m");
    expect(error.code).toBe("REMOTE_START_FAILED");
  });

  it("isRemoteError: false for null, undefined, plain values and other errors, never a TypeError; true for a second copy's brand", () => {
    for (const value of [null, undefined, 0, "RemoteError", {}, new Error("m")]) expect(isRemoteError(value)).toBe(false);
    expect(isRemoteError(new RemoteError("REMOTE_START_FAILED", "m"))).toBe(true);
    // Another installed copy of this package brands its errors with the same registered symbol.
    expect(isRemoteError({ [Symbol.for("@klbr/remote/error")]: true })).toBe(true);
    expect(isRemoteError({ [Symbol.for("@klbr/remote/error")]: "yes" })).toBe(false);
  });

  it("carries a cause only when given one", () => {
    expect("cause" in new RemoteError("REMOTE_START_FAILED", "m")).toBe(false);
    expect("cause" in new RemoteError("REMOTE_START_FAILED", "m", {})).toBe(false);
    const cause = new Error("underneath");
    expect(new RemoteError("REMOTE_START_FAILED", "m", { cause }).cause).toBe(cause);
  });
});

describe("startRemoteWorker, a start that fails before ssh runs", () => {
  it("is REMOTE_START_FAILED naming the target, the code as unknown, the error, no stderr part, and the error as its cause", async () => {
    const target = parseTarget({ ...entry(22), name: "one" });
    let caught: unknown;
    try {
      // The remote command refuses a digest that is not 64 hex digits, inside the supervisor's start.
      await startRemoteWorker({ target, runtime: { digest: "not-hex", dir: "/srv/klbr/klbr-not-hex" }, sessionId: "root", generation: "g-bad" });
    } catch (error) {
      caught = error;
    }
    expect(isRemoteError(caught)).toBe(true);
    const error = caught as RemoteError;
    expect(`${error.code}: ${error.message}`).toBe('REMOTE_START_FAILED: target "one": the worker did not start (unknown): runtime digest "not-hex" is not 64 hex digits');
    expect(error.cause).toBeInstanceOf(RangeError);
  });
});

describe("KEEPER_PID_PREFIX", () => {
  it("is the Python keeper's own prefix, and keeperPid reads a line that starts with it", () => {
    const keeper = readFileSync(fileURLToPath(new URL("../../../python/klbr/worker/keeper.py", import.meta.url)), "utf8");
    expect(keeper).toContain(`\nKEEPER_PID_PREFIX = ${JSON.stringify(KEEPER_PID_PREFIX)}\n`);
    expect(keeperPid(`${KEEPER_PID_PREFIX}7 python=3.12.1\n`)).toEqual({ pid: 7, python: "3.12.1" });
  });
});
