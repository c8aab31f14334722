import { describe, expect, test } from "vitest";
import { sessionFilter } from "./log-session";
import type { LogEntry } from "./log-view";

const e = (key: string, fields: Record<string, unknown>): LogEntry => ({ key, at_ms: 1, kind: "x", ...fields });

describe("sessionFilter", () => {
  test("keeps a session's own rows, its executions' requests and waits, and both sides of its peer requests", () => {
    const keep = sessionFilter("ps-1");
    const batch = [
      e("req-a", { kind: "request", execution_id: "ex-1" }), // sorted before its execution (which ended later)
      e("ex-1", { kind: "execution", id: "ex-1", session_id: "ps-1" }),
      e("ex-2", { kind: "execution", id: "ex-2", session_id: "root" }),
      e("req-b", { kind: "request", execution_id: "ex-2" }),
      e("in", { kind: "input", session_id: "ps-1" }),
      e("pr", { kind: "peer_request", from_session: "root", to_session: "ps-1" }),
      e("peer", { kind: "peer", session_id: "ps-1", opener_session_id: "root" }),
      e("inc", { kind: "incident.host.recovered" }),
    ];
    expect(keep(batch).map((x) => x.key)).toEqual(["req-a", "ex-1", "in", "pr", "peer"]);
    // A later batch (a follower's poll) still knows the executions of earlier ones.
    expect(keep([e("wait", { kind: "wait", execution_id: "ex-1" }), e("other", { kind: "wait", execution_id: "ex-2" })]).map((x) => x.key)).toEqual(["wait"]);
    expect(sessionFilter("root")(batch).map((x) => x.key)).toEqual(["ex-2", "req-b", "pr", "peer"]);
  });

  test("a remote namespace's generations belong to the session that opened it", () => {
    const keep = sessionFilter("root");
    const batch = [
      e("ns", { kind: "remote.namespace", id: "rns-1", session_id: "root" }),
      e("ns2", { kind: "remote.namespace", id: "rns-2", session_id: "ps-1" }),
      e("gen", { kind: "remote.generation", namespace_id: "rns-1" }),
      e("gen2", { kind: "remote.generation", namespace_id: "rns-2" }),
    ];
    expect(keep(batch).map((x) => x.key)).toEqual(["ns", "gen"]);
    expect(keep([e("end", { kind: "remote.generation.end", namespace_id: "rns-1" })]).map((x) => x.key)).toEqual(["end"]);
  });
});
