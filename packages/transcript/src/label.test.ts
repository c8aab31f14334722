import { describe, expect, it } from "vitest";
import { thrownCode } from "../test/vectors.js";
import type { InputEvent } from "./event.js";
import { inputLabel } from "./label.js";

function event(source: string, peer?: unknown): InputEvent {
  return { source, received_at_ms: null, payload: { text: "t", peer_request: peer } } as InputEvent;
}

describe("inputLabel", () => {
  it("is the source when there is no peer request", () => {
    expect(inputLabel(event("discord.mention"))).toBe("discord.mention");
  });

  it("names the peer request so the recipient can answer it", () => {
    expect(inputLabel(event("peer", { id: "req-1", session: "root" }))).toBe("peer request req-1 from root");
  });

  it("accepts the full identifier alphabet and length", () => {
    const id = "A".repeat(127) + "z";
    expect(inputLabel(event("peer", { id, session: "a_b.c-d" }))).toBe(`peer request ${id} from a_b.c-d`);
  });

  it("refuses a peer id longer than 128, naming it", () => {
    const id = "a".repeat(129);
    expect(thrownCode(() => inputLabel(event("peer", { id, session: "root" })))).toBe("TRANSCRIPT_INVALID_PEER_REQUEST");
    expect(() => inputLabel(event("peer", { id, session: "root" }))).toThrow(id);
  });

  it("refuses sources that would escape the frame line", () => {
    for (const bad of ["a\rb", "a\u2028b", "a[b", "x".repeat(129), "\u0085"]) {
      expect(thrownCode(() => inputLabel(event(bad)))).toBe("TRANSCRIPT_INVALID_LABEL");
    }
  });

  it("allows unicode and the middle dot in a source", () => {
    expect(inputLabel(event("discord · dm é"))).toBe("discord · dm é");
  });

  it("names a C13 peer request from its flat request_id and from_session", () => {
    const e = { source: "peer", received_at_ms: null, payload: { text: "t", request_id: "r-1", from_session: "root", evidence: ["event:1"] } };
    expect(inputLabel(e)).toBe("peer request r-1 from root");
  });

  it("names a C13 peer result from result_of and from_session, whatever else the payload carries", () => {
    const e = { source: "peer", received_at_ms: null, payload: { text: "{}", result_of: "r-1", from_session: "ps-a", request_id: "ignored" } };
    expect(inputLabel(e)).toBe("peer result r-1 from ps-a");
  });

  it("refuses half a C13 identity instead of showing it as the source", () => {
    for (const payload of [{ text: "t", request_id: "r" }, { text: "t", from_session: "root" }, { text: "t", result_of: "r" }]) {
      expect(thrownCode(() => inputLabel({ source: "operator", received_at_ms: null, payload }))).toBe("TRANSCRIPT_INVALID_PEER_REQUEST");
    }
  });
});
