import { describe, expect, it } from "vitest";
import { bwrapArgv, isWithin, type BwrapPolicy } from "./bwrap-argv";

const policy: BwrapPolicy = {
  workspace: "/home/op/project",
  freshDirs: ["/tmp"],
  hiddenDirs: ["/home/op/.local/share/klbr"],
  hiddenFiles: [],
  readOnly: ["/opt/klbr/python"],
  readWrite: ["/tmp/klbr-abc"],
  network: true,
};

describe("bwrapArgv", () => {
  it("mounts / read-only, fresh /dev /proc /tmp, the workspace read-write, hides the data dir, then binds what must show", () => {
    expect(bwrapArgv("bwrap", policy)).toEqual([
      "bwrap", "--cap-drop", "ALL", "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
      "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
      "--ro-bind", "/proc/sys", "/proc/sys",
      "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
      "--ro-bind-try", "/proc/irq", "/proc/irq",
      "--ro-bind-try", "/proc/bus", "/proc/bus",
      "--ro-bind-try", "/sys", "/sys",
      "--tmpfs", "/tmp",
      "--bind", "/home/op/project", "/home/op/project",
      "--tmpfs", "/home/op/.local/share/klbr",
      "--ro-bind", "/opt/klbr/python", "/opt/klbr/python",
      "--bind", "/tmp/klbr-abc", "/tmp/klbr-abc",
      "--chdir", "/home/op/project", "--",
    ]);
  });

  it("the tmp limit sizes each fresh tmpfs (--size right before its --tmpfs), and only those (C17)", () => {
    const argv = bwrapArgv("bwrap", { ...policy, freshDirs: ["/tmp", "/var/tmp"], tmpBytes: 8388608 });
    expect(argv.join(" ")).toContain("--size 8388608 --tmpfs /tmp --size 8388608 --tmpfs /var/tmp --bind");
    expect(argv.filter((a) => a === "--size")).toHaveLength(2);
    expect(argv.join(" ")).toContain("--tmpfs /home/op/.local/share/klbr");
    expect(bwrapArgv("bwrap", policy)).not.toContain("--size");
  });

  it("network off unshares the network namespace; on does not", () => {
    expect(bwrapArgv("bwrap", { ...policy, network: false })).toContain("--unshare-net");
    expect(bwrapArgv("bwrap", policy)).not.toContain("--unshare-net");
  });

  it("a data dir inside the workspace is masked after the workspace is bound, a release under it bound after the mask", () => {
    const argv = bwrapArgv("/usr/bin/bwrap", {
      ...policy,
      hiddenDirs: ["/home/op/project/.klbr"],
      readOnly: ["/home/op/project/.klbr/releases/abc", "/opt/klbr/python"],
    });
    const at = (flag: string, path: string) => argv.findIndex((a, i) => a === flag && argv[i + 1] === path);
    expect(argv[0]).toBe("/usr/bin/bwrap");
    expect(at("--bind", "/home/op/project")).toBeLessThan(at("--tmpfs", "/home/op/project/.klbr"));
    expect(at("--tmpfs", "/home/op/project/.klbr")).toBeLessThan(at("--ro-bind", "/home/op/project/.klbr/releases/abc"));
    // Shallower first among the read-only binds.
    expect(at("--ro-bind", "/opt/klbr/python")).toBeLessThan(at("--ro-bind", "/home/op/project/.klbr/releases/abc"));
  });

  it("fresh dirs go outermost first and duplicates once; a hidden file is covered by /dev/null", () => {
    const argv = bwrapArgv("bwrap", { ...policy, freshDirs: ["/var/tmp/x", "/tmp", "/tmp"], hiddenFiles: ["/run/klbr.sock"] });
    expect(argv.join(" ")).toContain("--tmpfs /tmp --tmpfs /var/tmp/x --bind");
    expect(argv.join(" ")).toContain("--ro-bind /dev/null /run/klbr.sock");
  });

  it("starts in the workspace unless told where", () => {
    expect(bwrapArgv("bwrap", policy).slice(-3)).toEqual(["--chdir", "/home/op/project", "--"]);
    expect(bwrapArgv("bwrap", { ...policy, chdir: "/home/op/project/src" }).slice(-3)).toEqual(["--chdir", "/home/op/project/src", "--"]);
  });

  it("is pure", () => {
    expect(bwrapArgv("bwrap", policy)).toEqual(bwrapArgv("bwrap", structuredClone(policy)));
  });
});

describe("isWithin", () => {
  it("compares whole path components", () => {
    expect(isWithin("/a/b", "/a")).toBe(true);
    expect(isWithin("/a", "/a")).toBe(true);
    expect(isWithin("/ab", "/a")).toBe(false);
    expect(isWithin("/x", "/")).toBe(true);
  });
});
