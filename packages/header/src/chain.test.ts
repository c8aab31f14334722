import { describe, expect, it } from "vitest";
import { resolve } from "./chain.js";
import { observe, pinAtStart } from "./rules.js";

describe("resolve", () => {
  it("never throws on garbage links; it says where it stopped", () => {
    const pin = pinAtStart([{ name: "c", text: "x\n" }], 1);
    for (const junk of [null, 3, "header_revision", [], { type: "header_revision" }]) {
      const resolution = resolve([pin, junk]);
      expect(resolution).toMatchObject({ text: "x\n", index: 0, complete: false });
      expect(resolution.stopped?.index).toBe(1);
    }
  });

  it("past the link that stopped it, reads on only from a full text (the failure is still named)", () => {
    const pin = pinAtStart([{ name: "c", text: "a\n" }], 1);
    const r1 = observe([pin], [{ name: "c", text: "b\n" }], { origin: "host" }, 2)!;
    const r2 = { ...observe([pin, r1], [{ name: "c", text: "c\n" }], { origin: "host" }, 3)!, change: { form: "full" as const, text: "c\n" } };
    const broken = { ...r1, observed_at_ms: -5 };
    const resolution = resolve([pin, broken, r2]);
    expect(resolution).toMatchObject({ text: "c\n", index: 2, complete: false });
    expect(resolution.stopped).toMatchObject({ index: 1, code: "HEADER_INVALID_TIME" });
    expect(resolve([pin, broken]).text).toBe("a\n");
  });

  it("one bad link no longer makes every later observation unreadable: the next one is full, the chain readable again", () => {
    const pin = pinAtStart([{ name: "c", text: "a\n" }], 1);
    const broken = { ...observe([pin], [{ name: "c", text: "b\n" }], { origin: "host" }, 2)!, observed_at_ms: -5 };
    let chain: unknown[] = [pin, broken];
    const first = observe(chain, [{ name: "c", text: "c\n" }], { origin: "host" }, 3)!;
    expect(first.change).toEqual({ form: "full", text: "c\n" });
    chain = [...chain, first];
    expect(resolve(chain)).toMatchObject({ text: "c\n", index: 2 });
    const second = observe(chain, [{ name: "c", text: "c\nd\n" }], { origin: "host" }, 4)!;
    expect(second.change.form).toBe("diff");
    expect(resolve([...chain, second])).toMatchObject({ text: "c\nd\n", index: 3 });
  });

  it("returns the recorded sources of the newest text", () => {
    const pin = pinAtStart([{ name: "c", text: "a\n" }], 1);
    const r1 = observe([pin], [{ name: "c", text: "a\n" }, { name: "d", text: "b\n" }], { origin: "host" }, 2)!;
    expect(resolve([pin, r1]).sources).toStrictEqual(r1.sources);
  });
});
