import { describe, expect, test } from "vitest";
import { frontierBlock, type FrontierContext, type FrontierSectionProvider } from "./frontier-block";

const section = (title: string): FrontierSectionProvider => async () => ({ title, lines: [`${title} line`] });
const titles = (block: string) => [...block.matchAll(/^## (.*)$/gm)].map((m) => m[1]);
const ctx = {} as FrontierContext;

describe("the frontier block's section order (C12, issue 19 item 6)", () => {
  test("a registered section takes its place in C12's order, not after it", async () => {
    const registered = ["pending inputs", "open work items", "staged candidates", "open waits", "last cell", "open peer requests"].map(section);
    expect(titles(await frontierBlock(registered, ctx))).toEqual(["pending inputs", "open work items", "staged candidates", "open peer requests", "open waits", "last cell"]);
  });

  test("a section C12 does not name goes before the last cell, in registration order", async () => {
    const registered = ["last cell", "zeta", "pending inputs", "alpha", "open waits"].map(section);
    expect(titles(await frontierBlock(registered, ctx))).toEqual(["pending inputs", "open waits", "zeta", "alpha", "last cell"]);
  });
});
