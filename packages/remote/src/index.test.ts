import { describe, expect, it } from "vitest";
import * as api from "./index.js";

describe("public API", () => {
  it("exports exactly these names", () => {
    expect(Object.keys(api).sort()).toEqual(
      [
        "KEEPER_PID_PREFIX",
        "RUNTIME_ABSENT",
        "RemoteError",
        "bundleDigest",
        "collectRuntime",
        "encodeBundle",
        "ensureRuntime",
        "findTarget",
        "installScript",
        "isRemoteError",
        "keeperLimitsArgs",
        "keeperPid",
        "openRemoteWorker",
        "parseTarget",
        "parseTargets",
        "probeTarget",
        "readTargets",
        "remoteSocketPath",
        "remoteWorkerCommand",
        "shellJoin",
        "shellQuote",
        "sshArgv",
        "sshFailure",
        "sshRun",
        "startRemoteWorker",
        "targetsPath",
        "withTarget",
        "withoutTarget",
        "writeTargets",
      ].sort(),
    );
  });

  it("reads the keeper's pid line and builds the remote command with the runtime on PYTHONPATH", () => {
    expect(api.keeperPid("noise\nklbr.keeper pid=4242 python=3.11.2\nmore")).toEqual({ pid: 4242, python: "3.11.2" });
    expect(api.keeperPid("klbr.keeper pid=12 python=3.11.2")).toBeNull();
    const target = api.parseTarget({ name: "t", ssh: { host: "h", port: 22, known_hosts: "/kh" }, workdir: "/srv/my work" });
    const digest = "d".repeat(64);
    expect(api.remoteWorkerCommand(target, { digest }, ["python3", "-m", "klbr.worker", "--token-stdin"])).toBe(
      `test -f '/srv/my work/klbr-${digest}/.klbr-digest' || { echo 'klbr.remote: runtime absent' >&2; exit 97; }; ` +
        `cd '/srv/my work' && exec env "PYTHONPATH=$PWD/klbr-${digest}" python3 -m klbr.worker --token-stdin`,
    );
    expect(() => api.remoteWorkerCommand(target, { digest: "$(id)" }, ["x"])).toThrow(RangeError);
    // The whole digest is 64 hex digits: hex with anything before or after it is refused too.
    expect(() => api.remoteWorkerCommand(target, { digest: `${digest};id` }, ["x"])).toThrow(RangeError);
    expect(() => api.remoteWorkerCommand(target, { digest: `id;${digest}` }, ["x"])).toThrow(RangeError);
    expect(api.remoteWorkerCommand(target, { digest }, ["x"], "/tmp/klbr-r-a b.sock")).toContain(".klbr-digest' || { rm -f '/tmp/klbr-r-a b.sock'; echo ");
  });

  it("the worker's socket goes in the workdir when it fits, else in /tmp", () => {
    const r = "a".repeat(24);
    expect(api.remoteSocketPath("/srv/klbr", r)).toBe(`/srv/klbr/klbr-r-${r}.sock`);
    expect(api.remoteSocketPath(`/${"w".repeat(80)}`, r)).toBe(`/tmp/klbr-r-${r}.sock`);
    expect(api.remoteSocketPath("/a:b", r)).toBe(`/tmp/klbr-r-${r}.sock`);
    expect(api.remoteSocketPath("klbr-work", r)).toBe(`/tmp/klbr-r-${r}.sock`);
    expect(api.remoteSocketPath("/srv/klbr")).toMatch(/^\/srv\/klbr\/klbr-r-[0-9a-f]{24}\.sock$/);
  });

  it("the bundle digest is the spec's source identity, names sorted by UTF-8 bytes", () => {
    const files = [{ path: "klbr/b.py", data: Buffer.from("b") }, { path: "klbr/a.py", data: Buffer.from("a") }];
    expect(api.bundleDigest(files)).toBe(api.bundleDigest([...files].reverse()));
    expect(api.bundleDigest(files)).toMatch(/^[0-9a-f]{64}$/);
    // Pinned against python/klbr/remote_install.py's bundle_digest for the same two files.
    expect(api.bundleDigest(files)).toBe(PINNED);
  });
});

const PINNED = "ce422dece5b53b3256dfb64a2439eb20d02af421ab04988e6630738b74be1d3f";
