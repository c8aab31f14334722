import { describe, expect, it } from "vitest";
import { cgroupPlaces, parseMountinfo, parseProcCgroup } from "./discover.js";

// This CI machine: v1 controllers, a v2 tree beside them holding none of them.
const HYBRID_CGROUP = `9:name=systemd:/
8:pids:/
4:memory:/process_api/b90e
2:cpuacct:/
1:cpu:/
0::/
`;
const HYBRID_MOUNTS = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`;

describe("cgroup discovery", () => {
  it("parses /proc/self/cgroup lines", () => {
    expect(parseProcCgroup("4:memory:/a/b\n2:cpu,cpuacct:/\n0::/user.slice/x.scope\n")).toEqual([
      { controllers: ["memory"], path: "/a/b" },
      { controllers: ["cpu", "cpuacct"], path: "/" },
      { controllers: [], path: "/user.slice/x.scope" },
    ]);
  });

  it("keeps only cgroup mounts, with their controllers and escaped paths decoded", () => {
    const mounts = parseMountinfo(`${HYBRID_MOUNTS}50 1 0:40 / /mnt/with\\040space rw - cgroup2 cgroup2 rw\n`);
    expect(mounts.map((m) => m.mountPoint)).toContain("/mnt/with space");
    expect(mounts.find((m) => m.mountPoint === "/sys/fs/cgroup")).toBeUndefined();
    expect(mounts.find((m) => m.mountPoint === "/sys/fs/cgroup/memory")).toMatchObject({ version: 1, controllers: ["rw", "memory"] });
  });

  it("finds the host's own directory in each hierarchy of a hybrid machine", () => {
    expect(cgroupPlaces(HYBRID_CGROUP, HYBRID_MOUNTS)).toEqual({
      v2: "/sys/fs/cgroup/unified",
      v1: { memory: "/sys/fs/cgroup/memory/process_api/b90e", pids: "/sys/fs/cgroup/pids", cpuacct: "/sys/fs/cgroup/cpuacct" },
    });
  });

  it("on a pure v2 machine (a systemd --user scope) finds the scope's directory and no v1", () => {
    const places = cgroupPlaces(
      "0::/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope\n",
      "30 24 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
    );
    expect(places).toEqual({ v2: "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope", v1: {} });
  });

  it("inside a container whose mount root is its own cgroup, maps the path under that root", () => {
    const places = cgroupPlaces("0::/docker/abc/sub\n", "30 24 0:26 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n");
    expect(places.v2).toBe("/sys/fs/cgroup/sub");
    // A path the mount does not show cannot be reached.
    expect(cgroupPlaces("0::/other\n", "30 24 0:26 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n").v2).toBeUndefined();
  });

  it("has nothing when no cgroup filesystem is mounted", () => {
    expect(cgroupPlaces(HYBRID_CGROUP, "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n")).toEqual({ v1: {} });
  });
});
