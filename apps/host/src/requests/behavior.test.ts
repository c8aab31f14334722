import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { testWorld, type TestWorld } from "../../test/request-context";
import { behaviorActivate } from "./behavior";

const DIGEST = "a".repeat(64);
let world: TestWorld;
let activated: Array<[string, number]>;
afterEach(() => world.close());

function setup(): TestWorld {
  activated = [];
  world = testWorld({ host: { hooks: { activate: async (path, epoch) => (activated.push([path, epoch]), { epoch: epoch + 1 }) } } });
  mkdirSync(join(world.dataDir, "releases", DIGEST), { recursive: true });
  return world;
}

describe("behavior.activate path check (only <data>/releases/<digest>)", () => {
  test("a release under <data>/releases is activated with its real path", async () => {
    setup();
    const path = join(world.dataDir, "releases", DIGEST);
    await expect(behaviorActivate(world.ctx, { path, expected_epoch: 1 })).resolves.toEqual({ epoch: 2 });
    expect(activated).toEqual([[path, 1]]);
  });

  test.each([
    ["a directory named after a digest elsewhere on disk", (w: TestWorld) => (mkdirSync(join(w.workspace, DIGEST), { recursive: true }), join(w.workspace, DIGEST))],
    ["a symlink in releases/ pointing outside", (w: TestWorld) => {
      mkdirSync(join(w.workspace, "elsewhere"), { recursive: true });
      symlinkSync(join(w.workspace, "elsewhere"), join(w.dataDir, "releases", "b".repeat(64)));
      return join(w.dataDir, "releases", "b".repeat(64));
    }],
    ["a path that climbs out with ..", (w: TestWorld) => (mkdirSync(join(w.workspace, DIGEST), { recursive: true }), join(w.dataDir, "releases", "..", "..", "ws", DIGEST))],
    ["a subdirectory of a release", (w: TestWorld) => (mkdirSync(join(w.dataDir, "releases", DIGEST, "sub")), join(w.dataDir, "releases", DIGEST, "sub"))],
    ["the releases directory itself", (w: TestWorld) => join(w.dataDir, "releases")],
    ["a release name that is not a digest", (w: TestWorld) => (mkdirSync(join(w.dataDir, "releases", "draft")), join(w.dataDir, "releases", "draft"))],
    ["a relative path", () => `releases/${DIGEST}`],
    ["a path that does not exist", (w: TestWorld) => join(w.dataDir, "releases", "c".repeat(64))],
  ])("%s is invalid_request and nothing is activated", async (_name, make) => {
    setup();
    const path = make(world);
    await expect(behaviorActivate(world.ctx, { path, expected_epoch: 1 })).rejects.toMatchObject({ code: "invalid_request", message: expect.stringContaining("releases") });
    expect(activated).toEqual([]);
  });
});
