import { describe, expect, it } from "vitest";
import { encodeEnv, guardLaunch, launcherEnv, tagsIn } from "./guard-launch.js";

const TAG = { name: "KLBR_TREE", value: "0123456789abcdef0123456789abcdef" };

describe("guard launch", () => {
  it("the launcher environment is the host's minimal base and the tags: no passed name, nothing else", () => {
    const host = { PATH: "/bin", HOME: "/h", LC_ALL: "C", LD_PRELOAD: "/x.so", SECRET: "s", PASSED: "p" };
    expect(launcherEnv([TAG], host)).toEqual({ PATH: "/bin", HOME: "/h", LC_ALL: "C", KLBR_TREE: TAG.value });
    expect(() => launcherEnv([{ name: "LD_PRELOAD", value: "/x.so" }], host)).toThrow(RangeError);
  });

  it("takes only tag-shaped entries of a worker's extra variables", () => {
    expect(tagsIn({ KLBR_HOST_TREE: TAG.value, LD_PRELOAD: "/x.so", PYTHONPATH: "/p" })).toEqual([{ name: "KLBR_HOST_TREE", value: TAG.value }]);
  });

  it("encodes the command's environment NUL-separated and refuses what execve cannot take", () => {
    expect(encodeEnv({ A: "1", B: "x=y" }).toString()).toBe("A=1\0B=x=y\0");
    expect(() => encodeEnv({ "A=B": "1" })).toThrow(RangeError);
    expect(() => encodeEnv({ A: "1\u00002" })).toThrow(RangeError);
  });

  it("starts the guard with the launcher environment, the env fd, and --bwrap-env for a bwrap prefix", () => {
    const launch = guardLaunch(["bwrap", "--", "true"], { LD_PRELOAD: "/x.so" }, { PATH: "/bin" }, "bwrap", "/py");
    expect(launch.file).toBe("/py");
    expect(launch.env).toEqual({ PATH: "/bin" });
    expect(launch.args.slice(launch.args.indexOf("--env-fd"))).toEqual(["--env-fd", "4", "--bwrap-env", "--", "bwrap", "--", "true"]);
    expect(launch.commandEnv.toString()).toBe("LD_PRELOAD=/x.so\0");
    expect(guardLaunch(["true"], {}, {}, "exec", "/py").args).not.toContain("--bwrap-env");
  });
});
