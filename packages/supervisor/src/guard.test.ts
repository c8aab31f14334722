import { describe, expect, it } from "vitest";
import { guardArgv, parseGuardStatus } from "./guard.js";

describe("guard status and argv", () => {
  it("parses the pid, an exec error, and says when the guard said nothing", () => {
    expect(parseGuardStatus("pid 42\n")).toEqual({ pid: 42 });
    expect(parseGuardStatus("error 2 No such file or directory\n")).toEqual({ error: "No such file or directory", reported: true });
    expect(parseGuardStatus("")).toMatchObject({ reported: false });
    expect(parseGuardStatus("garbage\n")).toMatchObject({ reported: false });
  });

  it("runs the command after --, isolated (-I -S), bound to this process as its parent", () => {
    const argv = guardArgv(["sh", "-c", "--"], "/py");
    expect(argv.slice(0, 3)).toEqual(["/py", "-I", "-S"]);
    expect(argv.slice(4)).toEqual(["--status-fd", "3", "--parent", String(process.pid), "--", "sh", "-c", "--"]);
  });
});
