import { afterEach, describe, expect, test } from "vitest";
import { testWorld, type TestWorld } from "../../test/request-context";
import { canonicalName, dispatch, HANDLERS } from "./index";

let world: TestWorld;
afterEach(() => world.close());

describe("dispatch", () => {
  test("an unknown method is invalid_request naming it", async () => {
    world = testWorld();
    await expect(dispatch(world.ctx, { method: "nope.nothing" })).rejects.toMatchObject({ code: "invalid_request", message: expect.stringContaining("nope.nothing") });
  });

  test("a method goes to its family's handler with its params (method stripped)", async () => {
    world = testWorld({ host: { status: { inspect: (s) => ({ inspected: s }) } } });
    expect(await dispatch(world.ctx, { method: "runtime.inspect" })).toEqual({ inspected: "root" });
  });

  test("aliases resolve to their canonical handlers (C13)", () => {
    expect(canonicalName("agents.open")).toBe("peer.open");
    expect(canonicalName("peer.message")).toBe("peer.send");
    for (const method of ["local.send", "runtime.wait", "evidence.resolve", "behavior.activate", "skills.index", "workspace.run"]) expect(HANDLERS[method]).toBeTypeOf("function");
  });
});
