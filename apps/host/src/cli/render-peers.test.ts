import { describe, expect, test } from "vitest";
import { describeEvent } from "./render";

describe("describeEvent for peers", () => {
  test("a peer's input and a stopped session get a line; operator input (the user's own) does not", () => {
    expect(describeEvent({ type: "input", session_id: "ps-1", event_id: 7, source: "peer" })).toBe("[peer input] event 7 for ps-1");
    expect(describeEvent({ type: "input", session_id: "root", event_id: 8, source: "operator" })).toBeNull();
    expect(describeEvent({ type: "session.stopped", session_id: "ps-1", drain: true })).toBe("[session.stopped] ps-1 (drained)");
    expect(describeEvent({ type: "session.stopped", session_id: "ps-1", drain: false })).toBe("[session.stopped] ps-1");
  });
});
