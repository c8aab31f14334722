import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { HostSandbox, type SandboxPaths } from "./host-sandbox";

const paths: SandboxPaths = {
  workspace: "/srv/project",
  dataDir: "/srv/data",
  controlSocket: "/srv/data/klbr.sock",
  pythonDir: "/opt/klbr/python",
  python: "/usr/bin/python3",
};
const bwrap = { mode: "bwrap" as const, network: false, bwrap: "bwrap" };

describe("HostSandbox", () => {
  it("unsandboxed: no worker option, no command prefix, nothing checked", async () => {
    const none = new HostSandbox({ mode: "none", network: true, bwrap: "bwrap" }, paths);
    expect(none.worker()).toBeUndefined();
    expect(none.commandPrefix()).toEqual([]);
    await expect(none.check()).resolves.toBeUndefined();
    expect(none.describe()).toEqual({ mode: "none", network: true });
  });

  it("the policy hides the data dir, gives fresh temporary dirs and shows the runtime read-only", () => {
    const policy = new HostSandbox(bwrap, paths).policy({ readOnly: ["/srv/data/releases/abc"], readWrite: ["/tmp/klbr-x"] });
    expect(policy).toMatchObject({
      workspace: "/srv/project",
      hiddenDirs: ["/srv/data"],
      hiddenFiles: [],
      readOnly: ["/opt/klbr/python", "/srv/data/releases/abc"],
      readWrite: ["/tmp/klbr-x"],
      network: false,
    });
    expect(policy.freshDirs).toEqual(expect.arrayContaining(["/tmp", tmpdir()]));
  });

  it("an interpreter inside a hidden or fresh dir (a venv in /tmp) shows through, by its prefix", () => {
    const policy = new HostSandbox(bwrap, { ...paths, python: "/tmp/venv-x/bin/python" }).policy();
    expect(policy.readOnly).toContain("/tmp/venv-x");
  });

  it("the worker prefix is bwrap (found on PATH) with the release and the private dir, and promises a pid namespace", () => {
    const worker = new HostSandbox(bwrap, paths).worker(["/srv/data/releases/abc"])!;
    expect(worker.pidNamespace).toBe(true);
    expect(worker.envHandoff).toBe("bwrap");
    const argv = worker.prefix("/tmp/klbr-priv");
    expect(argv[0]).toMatch(/bwrap$/);
    expect(argv.join(" ")).toContain("--tmpfs /srv/data --ro-bind /opt/klbr/python /opt/klbr/python --ro-bind /srv/data/releases/abc /srv/data/releases/abc --bind /tmp/klbr-priv /tmp/klbr-priv");
    expect(argv).toContain("--unshare-net");
    expect(argv.at(-1)).toBe("--");
  });

  it("workspace.run commands start where they were asked to", () => {
    expect(new HostSandbox(bwrap, paths).commandPrefix("/srv/project/src").slice(-3)).toEqual(["--chdir", "/srv/project/src", "--"]);
  });

  it("refuses a workspace inside the data directory it would hide", () => {
    expect(() => new HostSandbox(bwrap, { ...paths, workspace: "/srv/data/ws" })).toThrow(expect.objectContaining({ code: "SANDBOX_INVALID" }));
    expect(() => new HostSandbox({ ...bwrap, mode: "none", network: true }, { ...paths, workspace: "/srv/data/ws" })).not.toThrow();
  });

  it("refuses a data directory inside the workspace, where a cell could rename it out from under its mask (issue 19, item 2)", () => {
    for (const dataDir of ["/srv/project/.k/data", "/srv/project"]) {
      expect(() => new HostSandbox(bwrap, { ...paths, dataDir, controlSocket: `${dataDir}/klbr.sock` })).toThrow(
        expect.objectContaining({ code: expect.stringMatching(/^SANDBOX_(DATA_IN_WORKSPACE|INVALID)$/) }),
      );
    }
    expect(() => new HostSandbox(bwrap, { ...paths, dataDir: "/srv/project/.k/data" })).toThrow(expect.objectContaining({ code: "SANDBOX_DATA_IN_WORKSPACE" }));
    expect(() => new HostSandbox(bwrap, { ...paths, dataDir: "/srv/project-data" })).not.toThrow();
    expect(() => new HostSandbox({ ...bwrap, mode: "none", network: true }, { ...paths, dataDir: "/srv/project/.k/data" })).not.toThrow();
  });
});
