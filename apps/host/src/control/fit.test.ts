import { decodePayload, MAX_FRAME_BYTES } from "@klbr/frame";
import { describe, expect, test } from "vitest";
import { CUT_NOTE, cutStrings, fitFrame } from "./fit";

const payload = (frame: Uint8Array | null) => decodePayload(frame!.subarray(4)) as Record<string, any>;

describe("fitFrame", () => {
  test("a message that fits is sent as it is", () => {
    expect(payload(fitFrame({ id: 1, ok: true, value: { a: "x" } }))).toEqual({ id: 1, ok: true, value: { a: "x" } });
  });

  test("a reply past 1 MiB comes with its long strings cut, counted in bytes", () => {
    const frame = fitFrame({ id: 2, ok: true, value: { texts: ["a".repeat(900_000), "é".repeat(400_000)], n: 5 } });
    expect(frame!.length - 4).toBeLessThanOrEqual(MAX_FRAME_BYTES);
    const { value } = payload(frame);
    expect(value.n).toBe(5);
    expect(value.texts[0]).toMatch(new RegExp(`^a+…\\[\\d+ ${CUT_NOTE}\\]$`));
    const kept = value.texts[1].split("…")[0] as string;
    expect(Number(/\[(\d+) /.exec(value.texts[1])![1])).toBe(800_000 - Buffer.byteLength(kept));
  });

  test("an event is cut the same way", () => {
    const { event } = payload(fitFrame({ event: { type: "display", display: { text: "z".repeat(2_000_000) } } }));
    expect(event.display.text).toContain(CUT_NOTE);
  });

  test("a blob's bytes are never cut: CONTROL_REPLY_TOO_LARGE", () => {
    expect(payload(fitFrame({ id: 3, ok: true, value: { digest: "sha256:00", base64: "A".repeat(1_100_000) } }))).toMatchObject({ id: 3, ok: false, error: { code: "CONTROL_REPLY_TOO_LARGE" } });
  });

  test("what nothing makes fit is refused; what the wire cannot carry too; an event of either is not sent", () => {
    const many = Array.from({ length: 200_000 }, () => "abcdefgh");
    expect(payload(fitFrame({ id: 4, ok: true, value: many }))).toMatchObject({ id: 4, ok: false, error: { code: "CONTROL_REPLY_TOO_LARGE" } });
    expect(payload(fitFrame({ id: 5, ok: true, value: { n: Number.NaN } }))).toMatchObject({ id: 5, ok: false, error: { code: "CONTROL_REPLY_UNENCODABLE" } });
    expect(fitFrame({ event: many })).toBeNull();
  });

  test("cutStrings keeps a __proto__ key a key, and never splits a surrogate pair", () => {
    const value = JSON.parse('{"__proto__": {"x": "abcdef"}}') as unknown;
    const cut = cutStrings(value, 3) as Record<string, unknown>;
    expect(Object.getPrototypeOf(cut)).toBe(Object.prototype);
    expect(Object.keys(cut)).toEqual(["__proto__"]);
    const pair = cutStrings("a😀b", 2) as string;
    expect(pair.startsWith("a…")).toBe(true);
    expect(pair).toContain(`[5 ${CUT_NOTE}]`);
  });
});
