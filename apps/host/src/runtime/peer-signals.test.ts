import { describe, expect, test } from "vitest";
import { PeerSignals } from "./peer-signals";

describe("PeerSignals", () => {
  test("a settle wakes every wait on that request and only those", async () => {
    const s = new PeerSignals();
    const a = s.wait(1, 60_000);
    const b = s.wait(1, 60_000);
    const other = s.wait(2, 60_000);
    s.settle(1);
    expect(await Promise.all([a, b])).toEqual(["settled", "settled"]);
    expect(s.size).toBe(1);
    s.settle(2);
    expect(await other).toBe("settled");
    expect(s.size).toBe(0);
  });

  test("the time passing ends a wait as timeout, and it is forgotten", async () => {
    const s = new PeerSignals();
    expect(await s.wait(3, 1)).toBe("timeout");
    expect(s.size).toBe(0);
  });

  test("an abort (the cell ended) ends the wait at once; an already aborted signal never parks", async () => {
    const s = new PeerSignals();
    const ctl = new AbortController();
    const w = s.wait(4, 60_000, ctl.signal);
    ctl.abort();
    expect(await w).toBe("aborted");
    expect(await s.wait(4, 60_000, ctl.signal)).toBe("aborted");
    expect(s.size).toBe(0);
  });
});
