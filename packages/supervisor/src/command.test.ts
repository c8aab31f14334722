import { describe, expect, it } from "vitest";
import { workerCommand } from "./command.js";

const base = { role: "hooks" as const, sessionId: "s1", generation: "g1" };
const tag = { name: "KLBR_TREE", value: "0123456789abcdef0123456789abcdef" };

describe("workerCommand", () => {
  it("appends the flags to the given command and puts the token in the environment", () => {
    const cmd = workerCommand({ ...base, command: ["node", "fake.mjs"], sourceDir: "/src" }, "/tmp/d/w.sock", "tok", tag, "/tmp/d/skills.json", {});
    expect(cmd).toEqual({
      file: "node",
      args: ["fake.mjs", "--socket", "/tmp/d/w.sock", "--role", "hooks", "--session", "s1", "--generation", "g1", "--skills", "/tmp/d/skills.json", "--source", "/src"],
      env: { PATH: "/usr/local/bin:/usr/bin:/bin", KLBR_WORKER_TOKEN: "tok", KLBR_TREE: tag.value },
    });
  });

  it("defaults to python -m klbr.worker and prepends pythonPath to a PYTHONPATH the operator passed", () => {
    const cmd = workerCommand({ ...base, role: "workbench", pythonPath: ["/repo/python"], passEnv: ["PYTHONPATH"] }, "/s", "t", tag, undefined, { PYTHONPATH: "/old" });
    expect(cmd.args.slice(0, 2)).toEqual(["-m", "klbr.worker"]);
    expect(cmd.file).toMatch(/python/);
    expect(cmd.env.PYTHONPATH).toBe("/repo/python:/old");
    expect(cmd.args).not.toContain("--skills");
  });

  it("--display (C20) and --live-output (C16) go to a workbench only", () => {
    const opts = { ...base, command: ["x"], display: true, liveOutput: true };
    expect(workerCommand({ ...opts, role: "workbench" }, "/s", "t", tag, undefined, {}).args.slice(-2)).toEqual(["--live-output", "--display"]);
    expect(workerCommand(opts, "/s", "t", tag, undefined, {}).args).not.toContain("--display");
    expect(workerCommand({ ...base, role: "workbench", command: ["x"] }, "/s", "t", tag, undefined, {}).args).not.toContain("--display");
  });

  it("the token cannot be overridden by the caller's env", () => {
    expect(workerCommand({ ...base, command: ["x"], env: { KLBR_WORKER_TOKEN: "mine" } }, "/s", "real", tag, undefined, {}).env.KLBR_WORKER_TOKEN).toBe("real");
  });

  it("the tree tag goes to any command and cannot be overridden by the caller's env", () => {
    const env = { KLBR_TREE: "f".repeat(32), OTHER: "1" };
    const cmd = workerCommand({ ...base, command: ["/bin/anything"], env }, "/s", "t", tag, undefined, {});
    expect(cmd.env).toEqual({ PATH: "/usr/local/bin:/usr/bin:/bin", KLBR_WORKER_TOKEN: "t", KLBR_TREE: tag.value, OTHER: "1" });
  });

  it("a transport gets the far socket in --socket, wraps the argv, and keeps the token out of the environment", () => {
    const transport = { socketPath: "/far/r.sock", wrap: (argv: string[], local: string) => ["ssh", "-R", `/far/r.sock:${local}`, "host", argv.join(" ")] };
    const cmd = workerCommand({ ...base, role: "workbench", command: ["python3", "-m", "klbr.worker", "--token-stdin"], env: { KLBR_WORKER_TOKEN: "x" }, transport }, "/tmp/d/w.sock", "tok", tag, undefined, {});
    expect(cmd).toEqual({
      file: "ssh",
      args: ["-R", "/far/r.sock:/tmp/d/w.sock", "host", "python3 -m klbr.worker --token-stdin --socket /far/r.sock --role workbench --session s1 --generation g1"],
      env: { PATH: "/usr/local/bin:/usr/bin:/bin", KLBR_TREE: tag.value },
    });
  });

  it("refuses an empty command", () => {
    expect(() => workerCommand({ ...base, command: [] }, "/s", "t", tag, undefined, {})).toThrow(/\[\]/);
  });
});

describe("the worker's environment is the C15 minimal base (issue 10, item 5)", () => {
  const host = {
    PATH: "/p",
    HOME: "/h",
    LANG: "en_US.UTF-8",
    LC_TIME: "C",
    LC_ALL: "C.UTF-8",
    TZ: "UTC",
    TMPDIR: "/t",
    OPENAI_API_KEY: "secret",
    PYTHONPATH: "/host",
    KLBR_DATA_DIR: "/d",
    SHARE_ME: "yes",
  };

  it("keeps PATH, HOME, LANG, LC_*, TZ, TMPDIR and what the worker needs, nothing else of the host's", () => {
    const cmd = workerCommand({ ...base, command: ["x"], env: { KLBR_HOST_TREE: "a" } }, "/s", "t", tag, undefined, host);
    expect(cmd.env).toEqual({
      PATH: "/p",
      HOME: "/h",
      LANG: "en_US.UTF-8",
      LC_TIME: "C",
      LC_ALL: "C.UTF-8",
      TZ: "UTC",
      TMPDIR: "/t",
      KLBR_HOST_TREE: "a",
      KLBR_WORKER_TOKEN: "t",
      KLBR_TREE: tag.value,
    });
  });

  it("adds exactly the names the operator passes", () => {
    const cmd = workerCommand({ ...base, command: ["x"], passEnv: ["SHARE_ME", "ABSENT"] }, "/s", "t", tag, undefined, host);
    expect(cmd.env.SHARE_ME).toBe("yes");
    expect("ABSENT" in cmd.env).toBe(false);
    expect("OPENAI_API_KEY" in cmd.env).toBe(false);
  });
});
