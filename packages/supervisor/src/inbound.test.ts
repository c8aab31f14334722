import { describe, expect, it } from "vitest";
import { dispatchInbound, type InboundRoutes } from "./inbound.js";
import type { InboundMessage } from "./wire.js";

describe("dispatchInbound", () => {
  const completed = { kind: "completed", id: "c-1", result: { kind: "failed", error: "x" } } as InboundMessage;
  const hello = { kind: "hello" } as InboundMessage;

  it("hands a message to its kind's route, and only that one", () => {
    const seen: string[] = [];
    const routes: InboundRoutes = { completed: (m) => seen.push(`completed ${m.id}`), host_request: (m) => seen.push(`request ${m.id}`) };
    dispatchInbound(completed, routes, (kind) => seen.push(`unexpected ${kind}`));
    expect(seen).toEqual(["completed c-1"]);
  });

  it("a kind without a route is unexpected, an inherited property name included", () => {
    const seen: string[] = [];
    dispatchInbound(hello, { completed: () => seen.push("completed") }, (kind) => seen.push(`unexpected ${kind}`));
    dispatchInbound({ kind: "constructor" } as unknown as InboundMessage, {}, (kind) => seen.push(`unexpected ${kind}`));
    expect(seen).toEqual(["unexpected hello", "unexpected constructor"]);
  });
});
