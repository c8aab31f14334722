import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { snapshotRelease } from "@klbr/activation";
import { desc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { effects, events as eventsTable, executions, hostRequests, incidents, kernelResets, waits } from "../src/db/schema";
import { findEffect } from "../src/store/effects";
import { localSend } from "../src/requests/local";
import { getExecution } from "../src/store/executions";
import type { LiveExecution, Notification } from "../src/requests/context";
import { defaultPythonDir } from "../src/paths";
import type { Host } from "../src/runtime/host";
import { resultOf, startTestHost } from "./helpers";
import { sleepers } from "./processes";

let host: Host;
let workspace: string;
let dataDir: string;
let close: () => Promise<void>;
const events: Notification[] = [];

beforeAll(async () => {
  ({ host, workspace, dataDir, close } = await startTestHost());
  host.subscribe((n) => events.push(n));
});
afterAll(async () => close());

/** Run a cell and return its report, failing loudly on a worker failure. */
async function cell(code: string) {
  return host.execute(code);
}

describe("cells", () => {
  test("the namespace persists across cells and _ keeps the last value", async () => {
    expect((await cell("x = 40\nx + 2")).status).toBe("ok");
    const r = await cell("_ + x");
    expect(resultOf(r)).toBe("82");
  });

  test("an exception is recorded with its traceback", async () => {
    const r = await cell("1/0");
    expect(r.status).toBe("error");
    expect(r.error).toContain("ZeroDivisionError");
  });

  test("two first cells of a new session arriving together share one worker generation", async () => {
    const [a, b] = await Promise.all([host.execute("import os; os.getpid()", "twin"), host.execute("import os; os.getpid()", "twin")]);
    expect([a.status, b.status]).toEqual(["ok", "ok"]);
    expect(a.generation).toBe("g-1");
    expect(b.generation).toBe("g-1");
    expect(resultOf(a)).toBe(resultOf(b));
    expect(host.db.select().from(kernelResets).where(eq(kernelResets.sessionId, "twin")).all()).toHaveLength(1);
  });

  test("a cell over the source limit (even over one frame) is refused before it runs: CELL_TOO_LARGE and a durable row, no execution", async () => {
    const before = host.db.select().from(executions).all().length;
    await expect(cell(`# ${"x".repeat(1_100_000)}`)).rejects.toMatchObject({ code: "CELL_TOO_LARGE" });
    expect(host.db.select().from(executions).all()).toHaveLength(before);
    const refused = host.db.select().from(incidents).all().filter((r) => r.kind === "cell.refused");
    expect(refused.map((r) => r.detail)).toContainEqual({ reason: "cell_too_large", session_id: "root", bytes: 1_100_002, limit: 262_144 });
    expect(resultOf(await cell("x"))).toBe("40");
  });
});

describe("local.send", () => {
  test("the default review allows a plain message: confirmed with a durable operator-lane event", async () => {
    const r = await cell("r = await runtime.send('hello operator')\nr");
    expect(r.status).toBe("ok");
    const receipt = await cell("r['status'], r['event_id'] is not None, r['reason']");
    expect(resultOf(receipt)).toBe("('confirmed', True, None)");
    expect(events.some((e) => e.type === "message" && e.text === "hello operator")).toBe(true);
  });

  test("the default review holds a message carrying a credential", async () => {
    const r = await cell("r = await runtime.send('key AKIAABCDEFGHIJKLMNOP')\n(r['status'], r['event_id'], 'credential' in r['reason'])");
    expect(resultOf(r)).toBe("('held', None, True)");
  });

  test("a retry with the same execution and request identity returns the same receipt", async () => {
    const live: LiveExecution = { id: "ex-retry", sessionId: "root", generation: "g-1", yielded: false, ended: false, hooksPin: null };
    const ctx = { host: host.services, live, requestId: "req-1" };
    const first = await localSend(ctx, { text: "once" });
    const second = await localSend(ctx, { text: "once" });
    expect(second).toEqual(first);
    const other = await localSend({ ...ctx, requestId: "req-2" }, { text: "once" });
    expect(other.effect_id).not.toBe(first.effect_id);
  });

  test("a send whose cell yields while the review runs is refused, and nothing durable is written", async () => {
    const live: LiveExecution = { id: "ex-late", sessionId: "root", generation: "g-1", yielded: false, ended: false, hooksPin: null };
    const sending = localSend({ host: host.services, live, requestId: "req-late" }, { text: "too late" });
    live.yielded = true; // the cell's runtime.wait was accepted while delivery.review ran
    await expect(sending).rejects.toMatchObject({ code: "scope_expired" });
    expect(findEffect(host.db, "ex-late", "req-late")).toBeUndefined();
    expect(host.db.select().from(eventsTable).all().some((e) => (e.payload as { text: string }).text === "too late")).toBe(false);
  });
});

describe("scope and waiting", () => {
  test("a wait yields the cell; code after it does not run; later requests are refused", async () => {
    const r = await cell(
      [
        "after = False",
        "caught = None",
        "try:",
        "    await runtime.wait(30, reason='waiting for input')",
        "    after = True",
        "except BaseException as e:",
        "    try:",
        "        await runtime.send('sneaky')",
        "    except Exception as err:",
        "        caught = getattr(err, 'code', None)",
        "    raise",
      ].join("\n"),
    );
    expect(r.status).toBe("yielded");
    const check = await cell("after, caught");
    expect(resultOf(check)).toBe("(False, 'scope_expired')");
  });

  test("operator input wakes an open wait", async () => {
    events.length = 0;
    expect((await cell("await runtime.wait(None, reason='until the operator speaks')")).status).toBe("yielded");
    const input = await host.postInput("wake up");
    expect((input.attention as { effective: { action: string } }).effective.action).toBe("wake");
    const wake = events.find((e) => e.type === "wake");
    expect(wake).toMatchObject({ type: "wake", woken_by: `event:${input.event_id}` });
  });

  test("a wait with input already pending is woken at once and says so", async () => {
    await host.postInput("already here");
    const r = await cell("w = None\ntry:\n    w = await runtime.wait(5, reason='x')\nfinally:\n    pass");
    expect(r.status).toBe("yielded");
    // The reply is not visible to code after the await; the durable row is.
    const [wait] = host.db.select().from(waits).orderBy(desc(waits.createdAtMs)).limit(1).all();
    expect(wait).toMatchObject({ pendingInput: true, state: "woken", wokenBy: "pending_input" });
  });

  test("a newer wait supersedes the open one (C8); the deadline wakes the newer one only", async () => {
    const deadline = new Promise<Notification>((resolve) => {
      const off = host.subscribe((n) => {
        if (n.type === "wake" && n.woken_by === "deadline") {
          off();
          resolve(n);
        }
      });
    });
    expect((await cell("await runtime.wait(None, reason='no deadline')")).status).toBe("yielded");
    expect((await cell("await runtime.wait(0.05, reason='short')")).status).toBe("yielded");
    const [short, old] = host.db.select().from(waits).orderBy(desc(waits.createdAtMs), desc(waits.reason)).limit(2).all();
    expect([short!.reason, old!.reason]).toEqual(["short", "no deadline"]);
    expect(host.db.select().from(waits).where(eq(waits.id, old!.id)).get()).toMatchObject({ state: "superseded", wokenBy: `superseded:${short!.id}` });
    expect(await deadline).toMatchObject({ wait_id: short!.id });
    await host.postInput("nothing left to wake");
    expect(host.db.select().from(waits).where(eq(waits.id, old!.id)).get()).toMatchObject({ state: "superseded" });
  });

  test("a request from a background task after its cell ended gets scope_expired", async () => {
    await cell(
      [
        "import asyncio",
        "late = {}",
        "async def later():",
        "    await asyncio.sleep(0.2)",
        "    try:",
        "        await runtime.inspect()",
        "        late['code'] = 'ok'",
        "    except Exception as e:",
        "        late['code'] = getattr(e, 'code', repr(e))",
        "task = asyncio.ensure_future(later())",
      ].join("\n"),
    );
    // Wait for the task itself, not a fixed time, so a slow machine cannot read `late` too early.
    const r = await cell("await asyncio.wait_for(task, 30)\nlate.get('code')");
    expect(resultOf(r)).toBe("'scope_expired'");
  });
});

describe("inspection and instructions", () => {
  test("runtime.inspect gives now (ISO Z, seconds) and now_ms", async () => {
    const r = await cell("i = await runtime.inspect()\n(i['now'], i['now_ms'])");
    const [now, ms] = JSON.parse(resultOf(r)!.replace(/^\(|\)$/g, "[").replace(/\[$/, "]").replace(/'/g, '"')) as [string, number];
    expect(now).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(Math.abs(Date.parse(now) - ms)).toBeLessThan(1000);
  });

  test("runtime.instructions serves the resolved header text", async () => {
    const r = await cell("t = await runtime.instructions()\n('klbr runtime' in t['text'], t['complete'])");
    expect(resultOf(r)).toBe("(True, True)");
  });

  test("hooks.list and hooks.describe name the active revision's entrypoints", async () => {
    const r = await cell("l = await runtime.hooks_list()\nsorted(h['slot'] for h in l['hooks'])");
    expect(resultOf(r)).toBe("['attention.plan', 'delivery.review']");
    const d = await cell("(await runtime.hooks_describe('delivery.review'))['entrypoint']");
    expect(resultOf(d)).toBe("'klbr_hooks.defaults:delivery'");
  });

  test("frontier.select answers with a frontier the next request installs, even in a session no route drives", async () => {
    const r = await cell("f = await runtime.frontier_select()\n(f['installs'], f['frontier_id'].startswith('fr-'), type(f['covers_through']).__name__)");
    expect(resultOf(r)).toBe("('next_request', True, 'int')");
  });

  test("every family is built: remote.close of a namespace that does not exist is scope_expired", async () => {
    const r = await cell("try:\n    await runtime.request('remote.close', namespace_id='n', namespace_generation='g')\nexcept Exception as e:\n    out = (e.code, 'namespace' in str(e))\nout");
    expect(resultOf(r)).toBe("('scope_expired', True)");
  });
});

describe("skills", () => {
  test("skills.index lists ids and refusals; skills.load returns a body", async () => {
    const dir = join(dataDir, "skills", "deploy");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "SKILL.md"), "# deploy\n\nHow to deploy.\n");
    mkdirSync(join(dataDir, "skills", "Bad"), { recursive: true });
    writeFileSync(join(dataDir, "skills", "Bad", "SKILL.md"), "# Bad\n");
    // Skills written now belong to the next generation (C4): end this one so the next cell starts it.
    expect((await cell("import os\nos._exit(0)")).status).toBe("failed");
    const r = await cell("ix = await runtime.skills_index()\n(ix['ids'], [(x['name'], x['reason']) for x in ix['refused']])");
    expect(resultOf(r)).toBe("(['deploy'], [('Bad', 'invalid_id')])");
    const body = await cell("(await runtime.skills_load('deploy'))['body']");
    expect(resultOf(body)).toBe("'# deploy\\n\\nHow to deploy.\\n'");
    const missing = await cell("try:\n    await runtime.skills_load('nope')\nexcept Exception as e:\n    c = e.code\nc");
    expect(resultOf(missing)).toBe("'not_found'");
  });
});

describe("workspace", () => {
  test("workspace.run runs argv in the workspace with a minimal environment", async () => {
    writeFileSync(join(workspace, "hello.txt"), "hi\n");
    const r = await cell("o = await runtime.run(['sh', '-c', 'cat hello.txt; echo ${HOME:-nohome} ${npm_lifecycle_event:-noextra}'])\n(o['exit_code'], o['stdout'])");
    expect(resultOf(r)).toBe(`(0, 'hi\\n${process.env.HOME ?? "nohome"} noextra\\n')`);
  });

  test("a cwd outside the workspace is refused", async () => {
    const r = await cell("try:\n    await runtime.run(['true'], cwd='..')\nexcept Exception as e:\n    c = e.code\nc");
    expect(resultOf(r)).toBe("'invalid_request'");
  });

  test("a timeout kills the whole process tree and says so", async () => {
    const r = await cell("o = await runtime.run(['sh', '-c', 'setsid sleep 1713 & sleep 1713 & sleep 1713'], timeout_ms=300)\n(o['timed_out'], o['signal'])");
    expect(resultOf(r)).toBe("(True, 'SIGKILL')");
    expect(sleepers("1713")).toEqual([]);
  });

  test("a command a background task started dies with its cell, not at its timeout", async () => {
    const r = await cell(
      [
        "import asyncio, os",
        "bg = asyncio.ensure_future(runtime.run(['sh', '-c', 'touch bg-started; exec sleep 4343'], timeout_ms=120000))",
        "while not os.path.exists('bg-started'):",
        "    await asyncio.sleep(0.01)",
      ].join("\n"),
    );
    expect(r.status).toBe("ok");
    const reply = () => host.db.select().from(hostRequests).where(eq(hostRequests.executionId, r.id)).get()?.reply;
    while (!reply()) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(reply()).toMatchObject({ kind: "error", code: "scope_expired" });
    expect(sleepers("4343")).toEqual([]);
  });

  test("output beyond max_output_bytes is cut and counted", async () => {
    const r = await cell("o = await runtime.run(['sh', '-c', 'head -c 5000 /dev/zero | tr \"\\\\0\" a'], max_output_bytes=1000)\n(len(o['stdout']), o['truncated_bytes'])");
    expect(resultOf(r)).toBe("(1000, 4000)");
  });

  test("max_output_bytes at its edge: exactly N bytes are kept whole, N + 1 cut by one; the default N is 750,000 (C8)", async () => {
    const run = (bytes: number, max?: number) =>
      `o = await runtime.run(['sh', '-c', 'head -c ${bytes} /dev/zero | tr "\\\\0" a']${max === undefined ? "" : `, max_output_bytes=${max}`})\n(len(o['stdout']), o['truncated_bytes'])`;
    expect(resultOf(await cell(run(1000, 1000)))).toBe("(1000, 0)");
    expect(resultOf(await cell(run(1001, 1000)))).toBe("(1000, 1)");
    expect(resultOf(await cell(run(750_000)))).toBe("(750000, 0)");
    expect(resultOf(await cell(run(750_001)))).toBe("(750000, 1)");
  });
});

describe("evidence.resolve", () => {
  test("each ref is resolved or answered with its own error", async () => {
    const r = await cell("res = await runtime.resolve(['event:1', 'event:999999', 'bogus'])\n[(x['ok'], x.get('error', {}).get('code')) for x in res['results']]");
    expect(resultOf(r)).toBe("[(True, None), (False, 'not_found'), (False, 'invalid_request')]");
  });
});

describe("behavior.activate", () => {
  test("a new release replaces the hooks worker; the workbench namespace survives; a stale epoch conflicts", async () => {
    await cell("survivor = 'still here'");
    const draft = join(workspace, "draft");
    cpSync(join(defaultPythonDir(), "klbr_hooks"), draft, { recursive: true, filter: (src) => !src.includes("__pycache__") });
    for (const f of readdirSync(draft)) chmodSync(join(draft, f), 0o644);
    writeFileSync(join(draft, "defaults.py"), `${readFileSync(join(draft, "defaults.py"), "utf8")}\n# revision two\n`);
    const release = snapshotRelease(draft, join(dataDir, "releases"));
    const before = host.hooks.info()!;
    const r = await cell(`a = await runtime.activate(${JSON.stringify(release.path)}, ${before.epoch})\n(a['epoch'], a['revision'])`);
    expect(resultOf(r)).toBe(`(${before.epoch + 1}, '${release.digest}')`);
    expect(host.hooks.info()!.revision).toBe(release.digest);
    expect(resultOf(await cell("survivor"))).toBe("'still here'");
    const stale = await cell(`try:\n    await runtime.activate(${JSON.stringify(release.path)}, ${before.epoch})\nexcept Exception as e:\n    c = e.code\nc`);
    expect(resultOf(stale)).toBe("'epoch_conflict'");
    const send = await cell("(await runtime.send('after activation'))['status']");
    expect(resultOf(send)).toBe("'confirmed'");
  });

  test("a cell that used a hook keeps its revision until it ends, even across an activation", async () => {
    const draft = join(workspace, "draft3");
    cpSync(join(defaultPythonDir(), "klbr_hooks"), draft, { recursive: true, filter: (src) => !src.includes("__pycache__") });
    for (const f of readdirSync(draft)) chmodSync(join(draft, f), 0o644);
    writeFileSync(join(draft, "README.md"), "# revision three\n");
    const release = snapshotRelease(draft, join(dataDir, "releases"));
    const before = host.hooks.info()!;
    const r = await cell(
      [
        "a = await runtime.send('first, under the old revision')",
        `act = await runtime.activate(${JSON.stringify(release.path)}, ${before.epoch})`,
        "b = await runtime.send('second, same cell')",
        "(a['effect_id'], b['effect_id'])",
      ].join("\n"),
    );
    const [first, second] = resultOf(r)!.replace(/[()' ]/g, "").split(",");
    const revisionOf = (id: string) => host.db.select().from(effects).where(eq(effects.id, id)).get()!.hooksRevision;
    expect(revisionOf(first!)).toBe(before.revision);
    expect(revisionOf(second!)).toBe(before.revision);
    expect(host.hooks.info()!.revision).toBe(release.digest);
    const next = await cell("(await runtime.send('a new cell'))['effect_id']");
    expect(revisionOf(resultOf(next)!.replace(/'/g, ""))).toBe(release.digest);
  });
});

describe("a workbench that cannot be restarted after its cell killed it", () => {
  test("the cell's report still comes back, and the next cell restarts the worker", async () => {
    const internals = host.launch.settings;
    const python = internals.python;
    internals.python = "/nonexistent/klbr-python";
    let r;
    try {
      r = await cell("import os\nos._exit(3)");
    } finally {
      internals.python = python;
    }
    expect(r.status).toBe("failed");
    expect(host.db.select().from(incidents).where(eq(incidents.kind, "workbench.restart_failed")).all()).toHaveLength(1);
    const next = await cell("'back'");
    expect(resultOf(next)).toBe("'back'");
    expect(next.generation).not.toBe(r.generation);
  });
});

describe("a dead hooks worker", () => {
  test("is replaced once on the same release, however many callers find it dead", async () => {
    const before = (await host.status()) as { hooks: { pid: number; revision: string } };
    process.kill(before.hooks.pid, "SIGKILL");
    while (((await host.status()) as { hooks: { state: string } }).hooks.state !== "dead") await new Promise((r) => setTimeout(r, 10));
    const [a, b] = await Promise.all([host.postInput("first after the death"), host.postInput("second after the death")]);
    for (const input of [a, b]) expect((input.attention as { hook: Record<string, unknown> }).hook).not.toHaveProperty("unavailable");
    const restarts = host.db.select().from(incidents).where(eq(incidents.kind, "hooks.restart")).all();
    expect(restarts).toHaveLength(1);
    const after = (await host.status()) as { hooks: { pid: number; revision: string; state: string } };
    expect(after.hooks).toMatchObject({ revision: before.hooks.revision, state: "ready" });
    expect(after.hooks.pid).not.toBe(before.hooks.pid);
  });
});

