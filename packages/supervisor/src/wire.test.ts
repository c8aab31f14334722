import { MAX_CELL_SOURCE_BYTES } from "@klbr/envelope";
import { describe, expect, it } from "vitest";
import { errorCode, writeExecute, writeInterrupt, writeMessage, type Identity } from "./wire.js";

type Outcome = { bytes: string } | { error: string | undefined; message: string };

function outcome(write: () => Uint8Array): Outcome {
  try {
    return { bytes: Buffer.from(write()).toString("hex") };
  } catch (err) {
    return { error: errorCode(err), message: (err as Error).message };
  }
}

function expectSame(ids: Identity, id: string, code: string): void {
  const general = outcome(() => writeMessage(ids, { kind: "execute", id, code }));
  expect(outcome(() => writeExecute(ids, id, code))).toEqual(general);
}

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const IDS: Identity = { sessionId: "bench", generation: "g-1" };
const PIECES = ["1+1", "print('x')\n", '"', "\\", "\n", "\t", "\u0000", "\u001f", "\u007f", "é", "€", "😀", "\ud83d", "\ude00", "\u2028", "\ufeff", "</script>", " "];

describe("writeExecute", () => {
  it("writes what writeMessage writes, or throws what it throws, for 5,000 random cells", () => {
    const next = random(7);
    for (let i = 0; i < 5000; i++) {
      let code = "";
      const n = Math.floor(next() * 12);
      for (let k = 0; k < n; k++) code += PIECES[Math.floor(next() * PIECES.length)]!;
      expectSame(IDS, `c-${i}`, code);
    }
  });

  it("agrees at the size limits: the code's UTF-8 bytes and the frame's", () => {
    for (const unit of ["x", "é", "€", "😀", "\u0000"]) {
      const perUnit = Buffer.byteLength(unit);
      for (const delta of [-1, 0, 1]) {
        const count = Math.floor(MAX_CELL_SOURCE_BYTES / perUnit) + delta;
        expectSame(IDS, "c-1", unit.repeat(Math.max(0, count)));
      }
    }
  });

  it("agrees on bad ids and identities (refused by the general path's errors)", () => {
    for (const [ids, id] of [
      [IDS, "bad id"],
      [IDS, ""],
      [{ sessionId: "bad session", generation: "g" }, "c-1"],
      [{ sessionId: "s", generation: "x".repeat(200) }, "c-1"],
      [IDS, "a".repeat(128)],
    ] as [Identity, string][]) {
      expectSame(ids, id, "1+1");
    }
  });

  it("writes interrupts as writeMessage does, for good and bad ids and identities", () => {
    const cases: [Identity, string][] = [
      [IDS, "c-1"],
      [IDS, "busy-17"],
      [IDS, "a".repeat(128)],
      [IDS, "a".repeat(129)],
      [IDS, "bad id"],
      [IDS, ""],
      [IDS, "\u00e9"],
      [{ sessionId: "s.1_x-Y", generation: "G-2" }, "x"],
      [{ sessionId: "bad session", generation: "g" }, "c-1"],
      [{ sessionId: "s", generation: "" }, "c-1"],
    ];
    for (const [ids, id] of cases) {
      const general = outcome(() => writeMessage(ids, { kind: "interrupt", id }));
      expect(outcome(() => writeInterrupt(ids, id))).toEqual(general);
    }
  });
});
