// C20 where workers run elsewhere: a remote cell's displays (C14, over a real sshd on loopback)
// are stored and listed under the local cell that called it, numbered after its own, and pushed
// live to its watchers; a workbench in the bwrap sandbox shows displays as a plain one does
// (a real matplotlib plot included).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTestSshd } from "../../../test-support/sshd.js";
import { blobReply } from "../src/control/blob-get";
import type { Host } from "../src/runtime/host";
import type { LiveDisplayEvent } from "../src/runtime/live-output";
import { startTestHost, tempDir } from "./helpers";
import { bwrapAvailable } from "./sandbox-support";

const HELPERS = readFileSync(new URL("./display-cells.py", import.meta.url), "utf8");
const { sshd, skip } = await startTestSshd();
if (skip) console.warn(skip);
const HAS_BWRAP = bwrapAvailable();

describe.skipIf(!sshd)("a remote cell's displays (real sshd on loopback)", () => {
  let host: Host;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const dataDir = tempDir();
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dataDir, "targets.json"), JSON.stringify({ targets: [sshd!.target("loop", join(sshd!.dir, "dw"))] }));
    ({ host, close } = await startTestHost({ dataDir }));
  }, 180_000);
  afterAll(async () => {
    await close?.();
    await sshd?.stop();
  }, 180_000);

  test("listed under the calling execution after its own, stored, live to its watchers; the remote cell's dropped count is the caller's", async () => {
    const remote = `${HELPERS}\ndisplay(Picture(11, 3))\nfor i in range(40):\n    display(i)`;
    const call = `await runtime.remote_call(ns["target"], ns["namespace_id"], ns["namespace_generation"], "op-1", "execute", {"code": ${JSON.stringify(remote)}})`;
    const seen: LiveDisplayEvent[] = [];
    const stop = host.liveOutput!.watch({ sessionId: "root" }, () => undefined, (e) => seen.push(e));
    const report = await host.execute(["display('local first')", 'ns = await runtime.remote_ensure("loop")', `r = ${call}`, "r['status']"].join("\n"));
    stop();
    expect(report.status, JSON.stringify(report)).toBe("ok");
    expect(report.output.find((o) => o.stream === "result")?.text).toBe("'ok'");
    // 1 local + 32 remote (the remote worker's cap), listed up to the host's 32 per execution.
    expect(report.displays).toHaveLength(32);
    expect(report.displays.map((d) => d.seq)).toEqual([...Array(32).keys()]);
    expect(report.displays.slice(0, 3).map((d) => d.text)).toEqual(["'local first'", "<Picture 11x3>", "0"]);
    // The remote worker dropped 9 of its 41; the host could not list its 32nd remote one: 10.
    expect(report.displays_dropped).toBe(10);
    const image = report.displays[1]!.images[0]!;
    expect(image).toMatchObject({ mime: "image/png", width: 11, height: 3 });
    expect(Buffer.from((await blobReply(host.store, image.digest)).base64, "base64").readUInt32BE(16)).toBe(11);
    expect(seen.filter((e) => e.execution_id === report.id).map((e) => e.display)).toEqual(report.displays);
  }, 300_000);
});

describe.skipIf(!HAS_BWRAP)("a sandboxed workbench's displays (bwrap, network off)", () => {
  let host: Host;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ host, close } = await startTestHost({ sandbox: "bwrap", network: false }));
  }, 180_000);
  afterAll(async () => close?.());

  test("a picture and a real matplotlib plot are stored and listed", async () => {
    const report = await host.execute(`${HELPERS}\ndisplay(Picture(2, 3))\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()`);
    expect(report.status, JSON.stringify(report)).toBe("ok");
    expect(report.displays.map((d) => [d.images[0]?.width, d.images[0]?.height])).toEqual([
      [2, 3],
      [640, 480],
    ]);
    const png = Buffer.from((await blobReply(host.store, report.displays[1]!.images[0]!.digest)).base64, "base64");
    expect(png.readUInt32BE(16)).toBe(640);
  }, 120_000);
});
