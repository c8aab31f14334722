import { describe, expect, test } from "vitest";
import { encodeFrame } from "@klbr/frame";
import { makeEnvelope } from "@klbr/envelope";
import { encodedCost, fitReply, RUN_REPLY_BUDGET_BYTES, type RunReply } from "./workspace-output";

const reply = (stdout: string, stderr = ""): RunReply => ({
  exit_code: 0,
  signal: null,
  timed_out: false,
  stdout,
  stderr,
  truncated_bytes: 0,
  duration_ms: 12,
});

const ID = "x".repeat(128);

describe("fitReply", () => {
  test("750,000 control characters keep as many as fit the frame (~166k), and the cut is counted", () => {
    const fitted = fitReply(reply("\u0001".repeat(750_000)));
    const encoded = Buffer.byteLength(JSON.stringify(fitted));
    expect(encoded).toBeLessThanOrEqual(RUN_REPLY_BUDGET_BYTES);
    // Filled: less than one escaped character (6 bytes) plus the digits slack is left unused.
    expect(encoded).toBeGreaterThan(RUN_REPLY_BUDGET_BYTES - 32);
    expect(fitted.stdout.length).toBeGreaterThan(166_000);
    expect(fitted.stdout.length + fitted.truncated_bytes).toBe(750_000);
    // Sent in the largest envelope (128-character ids) it is still one frame.
    const envelope = makeEnvelope(ID, ID, { kind: "host_reply", id: ID, execution_id: ID, reply: { kind: "ok", value: fitted } });
    expect(() => encodeFrame(envelope)).not.toThrow();
  });

  test("a reply that fits is returned unchanged", () => {
    const r = reply("a\u0001\"b\\", "é\n");
    expect(fitReply(r)).toEqual(r);
  });

  test("both streams share the room: the smaller keeps up to half, and no surrogate pair is split", () => {
    const fitted = fitReply(reply("😀".repeat(200), "\u0002".repeat(400)), 2000);
    expect(Buffer.byteLength(JSON.stringify(fitted))).toBeLessThanOrEqual(2000);
    expect(fitted.stdout).toMatch(/^(😀)+$/u);
    expect(fitted.stderr.length).toBeGreaterThan(100);
    expect(fitted.truncated_bytes).toBe(800 - Buffer.byteLength(fitted.stdout) + 400 - Buffer.byteLength(fitted.stderr));
  });

  test("encodedCost is JSON.stringify's length in UTF-8", () => {
    const text = "a\u0000\u0008\t\n\u001f\"\\\u007f\u00e9\u20ac\u2028😀";
    expect(encodedCost(text)).toBe(Buffer.byteLength(JSON.stringify(text)) - 2);
  });
});
