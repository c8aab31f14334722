import { ExportResultCode } from "@opentelemetry/core";
import { describe, expect, test } from "vitest";
import { ExportLedger } from "./counts";

describe("ExportLedger: every span's fate is counted, and export trouble is said once", () => {
  test("a full queue refuses spans and counts them; settling makes room again", () => {
    const warnings: string[] = [];
    const ledger = new ExportLedger(2, (r) => warnings.push(r));
    expect([ledger.admit(), ledger.admit(), ledger.admit()]).toEqual([true, true, false]);
    expect(ledger.counts()).toEqual({ exported: 0, dropped: 1, pending: 2 });
    ledger.settled(2, { code: ExportResultCode.SUCCESS });
    expect(ledger.admit()).toBe(true);
    expect(ledger.counts()).toEqual({ exported: 2, dropped: 1, pending: 1 });
    expect(warnings).toEqual(["the export queue is full"]);
  });

  test("failed exports count as dropped; one warning however many fail", () => {
    const warnings: string[] = [];
    const ledger = new ExportLedger(100, (r) => warnings.push(r));
    for (let i = 0; i < 10; i++) ledger.admit();
    ledger.settled(4, { code: ExportResultCode.FAILED, error: new Error("connect ECONNREFUSED 127.0.0.1:9") });
    ledger.settled(6, { code: ExportResultCode.FAILED, error: new Error("again") });
    expect(ledger.counts()).toEqual({ exported: 0, dropped: 10, pending: 0 });
    expect(warnings).toEqual(["connect ECONNREFUSED 127.0.0.1:9"]);
  });

  test("a warning sink that throws never reaches the caller", () => {
    const ledger = new ExportLedger(0, () => {
      throw new Error("stderr closed");
    });
    expect(ledger.admit()).toBe(false);
    expect(ledger.counts().dropped).toBe(1);
  });
});
