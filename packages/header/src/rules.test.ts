import { describe, expect, it } from "vitest";
import { resolve } from "./chain.js";
import { sha256Hex } from "./digest.js";
import { currentTextSupported, fold, observe, pinAtStart } from "./rules.js";
import type { HeaderRecord } from "./types.js";

const contract = (text: string) => [{ name: "contract", text }];

describe("the three rules", () => {
  it("pins the joined text at session start", () => {
    const pin = pinAtStart([{ name: "a", text: "1\n" }, { name: "b", text: "2" }], 42);
    expect(pin).toStrictEqual({ type: "header_pin", digest: sha256Hex("1\n2"), text: "1\n2", reason: "session_start", pinned_at_ms: 42 });
  });

  it("keeps the head's bytes: observing appends, it never rewrites the pin", () => {
    const pin = pinAtStart(contract("v1\n"), 1);
    const before = structuredClone(pin);
    const chain: HeaderRecord[] = [pin];
    const revision = observe(chain, contract("v2\n"), { origin: "host" }, 2)!;
    expect(pin).toStrictEqual(before);
    expect(chain).toHaveLength(1);
    expect(revision.type).toBe("header_revision");
    expect(resolve([...chain, revision]).text).toBe("v2\n");
  });

  it("copies the actor without adding anything to it", () => {
    const pin = pinAtStart(contract("v1\n"), 1);
    const actor = { origin: "host" as const };
    const revision = observe([pin], contract("v2\n"), actor, 2)!;
    expect(revision.actor).toStrictEqual({ origin: "host" });
    expect(revision.actor).not.toBe(actor);
  });

  it("carries the whole text when even the head does not reconstruct", () => {
    const pin = { ...pinAtStart(contract("v1\n"), 1), digest: sha256Hex("other") };
    const revision = observe([pin], contract("v2\n"), { origin: "host" }, 2)!;
    expect(revision.change).toStrictEqual({ form: "full", text: "v2\n" });
  });

  it("fold accepts any iterable of covered digests", () => {
    const pin = pinAtStart(contract("v1\n"), 1);
    const revision = observe([pin], contract("v2\n"), { origin: "host" }, 2)!;
    const chain = [pin, revision];
    expect(fold(chain, contract("v2\n"), 3, new Set([revision.digest])).reason).toBe("fold_covered_revision");
    expect(fold(chain, contract("v2\n"), 3, []).reason).toBe("fold");
    expect(currentTextSupported(chain, [revision.digest])).toBe(false);
    expect(currentTextSupported(chain, [])).toBe(true);
  });

  it("after a fold, the new pin is the head and later changes patch against it", () => {
    const pin = pinAtStart(contract("v1\n"), 1);
    const r1 = observe([pin], contract("v2\n"), { origin: "host" }, 2)!;
    const moved = fold([pin, r1], contract("v2\n"), 3, [r1.digest]);
    const chain: HeaderRecord[] = [pin, r1, moved];
    const r2 = observe(chain, contract("v2\nv3\n"), { origin: "session", execution_id: "x", step: 1 }, 4)!;
    expect(r2.change).toMatchObject({ form: "diff", base_digest: sha256Hex("v2\n") });
    const resolution = resolve([...chain, r2]);
    expect(resolution).toMatchObject({ text: "v2\nv3\n", head: 2, index: 3, complete: true });
  });

  it("refuses to observe or fold before a pin, and refuses a bad time", () => {
    expect(() => observe([], contract("x"), { origin: "host" }, 1)).toThrow(expect.objectContaining({ code: "HEADER_NO_PIN" }));
    expect(() => fold([], contract("x"), 1, [])).toThrow(expect.objectContaining({ code: "HEADER_NO_PIN" }));
    expect(() => pinAtStart(contract("x"), 1.5)).toThrow(expect.objectContaining({ code: "HEADER_INVALID_TIME" }));
  });
});
