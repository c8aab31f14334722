import { afterEach, describe, expect, test } from "vitest";
import { testWorld, type TestWorld } from "../../test/request-context";
import { skillsIndex, skillsLoad } from "./skills";

let world: TestWorld;
afterEach(() => world.close());

describe("skills.index / skills.load handlers", () => {
  test("serve the cell's own session's generation set", async () => {
    const asked: unknown[] = [];
    world = testWorld({
      live: { sessionId: "s-2" },
      host: {
        skills: {
          index: (session) => (asked.push(["index", session]), { revision: "r", ids: ["a"], refused: [] }),
          load: (session, id) => (asked.push(["load", session, id]), { id, digest: "d", body: "# a\n" }),
        },
      },
    });
    expect(await skillsIndex(world.ctx)).toEqual({ revision: "r", ids: ["a"], refused: [] });
    expect(await skillsLoad(world.ctx, { id: "a" })).toEqual({ id: "a", digest: "d", body: "# a\n" });
    expect(asked).toEqual([["index", "s-2"], ["load", "s-2", "a"]]);
  });

  test("a non-string id is invalid_request", async () => {
    world = testWorld();
    await expect(skillsLoad(world.ctx, { id: 3 as never })).rejects.toMatchObject({ code: "invalid_request" });
  });
});
