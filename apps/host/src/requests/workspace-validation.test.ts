import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { testWorld, type TestWorld } from "../../test/request-context";
import { checkRunInput, resolveCwd, workspaceInfo } from "./workspace";

let world: TestWorld;
afterEach(() => world.close());

describe("workspace.info", () => {
  test("names the workspace root and the data directory", async () => {
    world = testWorld();
    expect(await workspaceInfo(world.ctx)).toMatchObject({ root: world.workspace, data_dir: world.dataDir });
  });
});

describe("workspace.run validation (the run itself is tested in workspace-run tests)", () => {
  function ws(): string {
    world = testWorld();
    mkdirSync(join(world.workspace, "sub"), { recursive: true });
    mkdirSync(join(world.workspace, "..", "outside"), { recursive: true });
    symlinkSync(join(world.workspace, "..", "outside"), join(world.workspace, "escape"));
    writeFileSync(join(world.workspace, "file"), "x");
    return world.workspace;
  }

  test("cwd resolves inside the workspace", async () => {
    const root = ws();
    expect(await resolveCwd(root, undefined)).toBe(root);
    expect(await resolveCwd(root, "sub")).toBe(join(root, "sub"));
    expect(await resolveCwd(root, "sub/..")).toBe(root);
  });

  test.each([
    ["an absolute cwd", "/tmp", "invalid_request"],
    ["a cwd climbing out", "..", "invalid_request"],
    ["a symlink out of the workspace", "escape", "invalid_request"],
    ["a file", "file", "invalid_request"],
    ["a missing directory", "nope", "not_found"],
    ["a NUL", "sub\u0000x", "invalid_request"],
  ])("%s is %s", async (_name, cwd, code) => {
    const root = ws();
    await expect(resolveCwd(root, cwd)).rejects.toMatchObject({ code });
  });

  test.each([
    ["a NUL in argv", ["echo", "a\u0000b"], undefined],
    ["an empty program", [""], undefined],
    ["an empty env name", ["true"], { "": "x" }],
    ["an env name with =", ["true"], { "A=B": "x" }],
    ["a NUL in an env name", ["true"], { "A\u0000": "x" }],
    ["a NUL in an env value", ["true"], { A: "x\u0000" }],
  ])("%s is invalid_request", (_name, argv, env) => {
    world = testWorld();
    expect(() => checkRunInput(argv as string[], env as Record<string, string> | undefined)).toThrow(expect.objectContaining({ code: "invalid_request" }));
  });

  test("ordinary argv and env pass", () => {
    world = testWorld();
    expect(() => checkRunInput(["echo", "hi"], { A: "1", LANG: "C.UTF-8" })).not.toThrow();
  });
});
