import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { migrateHostDb, type HostDb } from "../src/db/open";
import type { HookOutcome, HostServices, LiveExecution, Notification, RequestContext } from "../src/requests/context";
import { startExecution } from "../src/store/executions";
import { sqliteStore } from "../src/store/sqlite";

/** A handler's world without a worker: a migrated in-memory log, a fixed clock, recorded notifications. */
export interface TestWorld {
  ctx: RequestContext;
  host: HostServices;
  live: LiveExecution;
  db: HostDb;
  sqlite: Database.Database;
  notes: Notification[];
  /** Deadlines the handler asked to be scheduled. */
  deadlines: Array<{ waitId: string; deadlineMs: number }>;
  /** Hook invocations, in order. */
  hookCalls: Array<{ slot: string; input: unknown }>;
  dataDir: string;
  workspace: string;
  setNow(ms: number): void;
  close(): void;
}

/** Services a test replaces: any basic, and any method of a service view. */
export type TestServices = Partial<Omit<HostServices, "hooks" | "skills" | "instructions" | "status" | "wakes" | "sessions" | "frontiers">> & {
  hooks?: Partial<HostServices["hooks"]>;
  skills?: Partial<HostServices["skills"]>;
  instructions?: Partial<HostServices["instructions"]>;
  status?: Partial<HostServices["status"]>;
  wakes?: Partial<HostServices["wakes"]>;
  sessions?: Partial<HostServices["sessions"]>;
  frontiers?: Partial<HostServices["frontiers"]>;
};

/** The host clock tests start at (2027-01-15T08:00:00Z). */
export const T0 = 1_800_000_000_000;

/** Build a request context over a fresh log; `host` overrides any service, `live` the foreground cell. */
export function testWorld(opts: { host?: TestServices; live?: Partial<LiveExecution>; hook?: HookOutcome } = {}): TestWorld {
  const dir = mkdtempSync("/tmp/klbr-rq-");
  const dataDir = join(dir, "data");
  const workspace = join(dir, "ws");
  const sqlite = new Database(":memory:");
  const db = migrateHostDb(sqlite);
  let now = T0;
  let ids = 0;
  const notes: Notification[] = [];
  const deadlines: TestWorld["deadlines"] = [];
  const hookCalls: TestWorld["hookCalls"] = [];
  // Cast: HostServices grows as families land; a service a test does not provide fails when called.
  const host = ({
    workspace,
    dataDir,
    store: sqliteStore(db, sqlite),
    now: () => now,
    newId: (prefix) => `${prefix}-${++ids}`,
    notify: (n) => void notes.push(n),
    ...opts.host,
    hooks: {
      invoke: async (_live, slot, input) => {
        hookCalls.push({ slot, input });
        return opts.hook ?? { ok: true, value: { action: "allow" }, revision: "rev-1" };
      },
      info: () => null,
      activate: async () => ({}),
      ...opts.host?.hooks,
    },
    skills: { index: () => ({ revision: null, ids: [], refused: [] }), load: () => undefined, ...opts.host?.skills },
    instructions: { current: async () => ({ text: "" }), observation: () => ({ plan: () => ({ append: null, result: null }), atMs: T0 }), ...opts.host?.instructions },
    status: { inspect: (sessionId) => ({ session_id: sessionId }), ...opts.host?.status },
    wakes: {
      scheduleWaitDeadline: (waitId, deadlineMs) => void deadlines.push({ waitId, deadlineMs }),
      takePendingInputs: async () => [],
      ...opts.host?.wakes,
    } as HostServices["wakes"],
    sessions: { ...opts.host?.sessions } as HostServices["sessions"],
    frontiers: { ...opts.host?.frontiers } as HostServices["frontiers"],
  } satisfies Partial<HostServices>) as unknown as HostServices;
  const live: LiveExecution = { id: "ex-1", sessionId: "root", generation: "g-1", yielded: false, ended: false, hooksPin: null, ...opts.live };
  startExecution(db, { id: live.id, sessionId: live.sessionId, generation: live.generation, code: "pass", startedAtMs: now });
  return {
    ctx: { host, live, requestId: "rq-1" },
    host,
    live,
    db,
    sqlite,
    notes,
    deadlines,
    hookCalls,
    dataDir,
    workspace,
    setNow: (ms) => void (now = ms),
    close: () => {
      sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A migrated in-memory log for store tests; close it with `.$client.close()` or let the process end. */
export function memoryDb(): { db: HostDb; sqlite: Database.Database } {
  const sqlite = new Database(":memory:");
  return { db: migrateHostDb(sqlite), sqlite };
}
