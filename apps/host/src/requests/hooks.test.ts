import { afterEach, describe, expect, test } from "vitest";
import { testWorld, type TestWorld } from "../../test/request-context";
import { hooksDescribe, hooksList, SLOT_CONTRACTS } from "./hooks";

let world: TestWorld;
afterEach(() => world.close());
const info = { revision: "a".repeat(64), epoch: 3, path: "/d/releases/x", hooks: { "attention.plan": "klbr_hooks.defaults:attention", "delivery.review": "klbr_hooks.defaults:delivery" } };

describe("hooks.list / hooks.describe handlers", () => {
  test("no active behaviour revision: unavailable", async () => {
    world = testWorld();
    await expect(hooksList(world.ctx)).rejects.toMatchObject({ code: "unavailable" });
    await expect(hooksDescribe(world.ctx, { slot: "attention.plan" })).rejects.toMatchObject({ code: "unavailable" });
  });

  test("list: the revision, epoch and each slot's entrypoint", async () => {
    world = testWorld({ host: { hooks: { info: () => info } } });
    expect(await hooksList(world.ctx)).toEqual({
      revision: info.revision,
      epoch: 3,
      hooks: [
        { slot: "attention.plan", entrypoint: "klbr_hooks.defaults:attention" },
        { slot: "delivery.review", entrypoint: "klbr_hooks.defaults:delivery" },
      ],
    });
  });

  test("describe: the slot's contract and the 2 s budget; an unknown slot is not_found", async () => {
    world = testWorld({ host: { hooks: { info: () => info } } });
    expect(await hooksDescribe(world.ctx, { slot: "delivery.review" })).toEqual({
      slot: "delivery.review",
      entrypoint: "klbr_hooks.defaults:delivery",
      revision: info.revision,
      epoch: 3,
      ...SLOT_CONTRACTS["delivery.review"],
      budget_ms: 2000,
    });
    await expect(hooksDescribe(world.ctx, { slot: "nope" })).rejects.toMatchObject({ code: "not_found" });
    // A slot with a contract that the release does not implement is not found either.
    world.close();
    world = testWorld({ host: { hooks: { info: () => ({ ...info, hooks: { "attention.plan": "m:f" } }) } } });
    await expect(hooksDescribe(world.ctx, { slot: "delivery.review" })).rejects.toMatchObject({ code: "not_found" });
  });
});
