import { describe, expect, it } from "vitest";
import { isRemoteError } from "./errors.js";
import { remoteSocketPath } from "./start.js";
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
