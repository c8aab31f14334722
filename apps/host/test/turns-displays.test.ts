// C20 in model turns through a host and the scripted route: a model's cell that plots (display of
// a real PNG) is recorded with origin "model"; the next request's tool result reads the display's
// text and its image line, and, for a route declared "images": true, the image's stored bytes as
// an image part in the API's shape. A route without images never gets the bytes. Every request
// re-assembles from the log byte for byte (images included).
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, test } from "vitest";
import { startScriptedServer, type ScriptedServer } from "../../../test-support/scripted-server.ts";
import { executions, modelRequests } from "../src/db/schema";
import type { Host } from "../src/runtime/host";
import { reassembleRequest } from "../src/runtime/reassemble";
import { blobReply } from "../src/control/blob-get";
import { startTestHost, tempDir } from "./helpers";

const HELPERS = readFileSync(new URL("./display-cells.py", import.meta.url), "utf8");
const sha = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

let server: ScriptedServer | undefined;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await server?.close();
  server = undefined;
});

async function drivenHost(api: "chat" | "responses" | "anthropic", images: boolean): Promise<Host> {
  const dataDir = tempDir();
  const base_url = api === "anthropic" ? server!.url : `${server!.url}/v1`;
  const route = { name: "scripted", api, base_url, model: "scripted-1", api_key_env: null, context_tokens: 200_000, ...(images ? { images: true } : {}) };
  writeFileSync(join(dataDir, "routes.json"), JSON.stringify({ default: "scripted", routes: [route] }));
  const t = await startTestHost({ dataDir, drive: true });
  closers.push(t.close);
  return t.host;
}

const PLOT = `${HELPERS}\nprint('drawn')\ndisplay(Picture(9, 7))`;

describe.each(["chat", "responses", "anthropic"] as const)("%s route", (api) => {
  test("images: true: the image's stored bytes go as an image part of the cell's result; origin model; re-assembled byte for byte", async () => {
    server = await startScriptedServer();
    const host = await drivenHost(api, true);
    server.push({ text: "plotting", calls: [{ code: PLOT }] }, { text: "I see a 9x7 picture." }, { text: "still there" });
    await host.postInput("plot it");
    await host.turns!.idle();
    const cell = host.db.select().from(executions).all().find((e) => e.code === PLOT)!;
    expect(cell.origin).toBe("model");
    const [display] = cell.displays as Array<{ images: Array<{ digest: string }> }>;
    const base64 = (await blobReply(host.store, display!.images[0]!.digest)).base64;
    const second = server.requests[1]!.body;
    expect(second).toContain("<Picture 9x7>");
    expect(second).toMatch(/\[image\/png 9x7 · \d+ B · sha256:[0-9a-f]{12}\]/);
    const wire = { chat: `"image_url":{"url":"data:image/png;base64,${base64}"}`, responses: `"type":"input_image","detail":"auto","image_url":"data:image/png;base64,${base64}"`, anthropic: `"type":"image","source":{"type":"base64","media_type":"image/png","data":"${base64}"}` }[api];
    expect(second).toContain(wire);
    // A later request repeats the image in the same bytes: the prefix stays stable.
    await host.postInput("and now?");
    await host.turns!.idle();
    const third = server.requests[2]!.body;
    expect(third).toContain(wire);
    expect(server.requests[2]!.shared_prefix_bytes).toBeGreaterThan(second.indexOf(wire) + wire.length);
    for (const row of host.db.select().from(modelRequests).all()) expect(sha((await reassembleRequest(host.store, row)).text)).toBe(row.bodyDigest);
  }, 120_000);

  test("no images: the image line only, never the bytes", async () => {
    server = await startScriptedServer();
    const host = await drivenHost(api, false);
    server.push({ text: "plotting", calls: [{ code: PLOT }] }, { text: "done" });
    await host.postInput("plot it");
    await host.turns!.idle();
    const cell = host.db.select().from(executions).where(eq(executions.origin, "model")).all().at(-1)!;
    const [display] = cell.displays as Array<{ images: Array<{ digest: string }> }>;
    const base64 = (await blobReply(host.store, display!.images[0]!.digest)).base64;
    const second = server.requests[1]!.body;
    expect(second).toMatch(/\[image\/png 9x7 · \d+ B · sha256:[0-9a-f]{12}\]/);
    expect(second).not.toContain(base64);
    expect(second).not.toContain("data:image");
  }, 120_000);
});
