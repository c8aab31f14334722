// The activation store's refusals in their exact words, its clock, a timer that must not outlive
// its handshake, and the helpers around it (a writer's liveness, the error brand, the digest name).
import type Database from "better-sqlite3";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { removeDir, tempDir, writeSource } from "../test/helpers/tree.js";
import { openDatabase } from "./database.js";
import { ActivationError, isActivationError } from "./errors.js";
import { snapshotRelease, verifyRelease } from "./release.js";
import { openActivationStore, type ActivationStore } from "./store.js";
import { isStaleTemp, UNNAMED_TEMP_MAX_AGE_MS } from "./temp-dirs.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  cleanups.splice(0).reverse().forEach((fn) => fn());
});

function setup(now: () => number): { db: Database.Database; store: ActivationStore; release: string; digest: string; base: string } {
  const base = tempDir();
  const db = openDatabase(path.join(base, "klbr.db"));
  cleanups.push(() => removeDir(base), () => db.close());
  const store = openActivationStore(db, { now });
  store.migrate();
  const draft = path.join(base, "draft");
  fs.mkdirSync(draft);
  writeSource(draft);
  const snap = snapshotRelease(draft, path.join(base, "releases"));
  return { db, store, release: snap.path, digest: snap.digest, base };
}

async function refusalOf(promise: Promise<unknown>): Promise<ActivationError> {
  try {
    await promise;
  } catch (error) {
    if (isActivationError(error)) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("activate", () => {
  it("stamps the revision and its history with the store's clock", async () => {
    const { store, release } = setup(() => 4_242);
    await store.activate({ path: release, expectedEpoch: 0 }, async () => {});
    expect(store.current()).toMatchObject({ epoch: 1, activatedAtMs: 4_242 });
    expect(store.history().map((h) => h.atMs)).toEqual([4_242]);
  });

  it("a handshake past its time limit: the refusal names the release and the limit", async () => {
    const { store, release, digest } = setup(() => 1);
    const got = await refusalOf(store.activate({ path: release, expectedEpoch: 0 }, () => new Promise<void>(() => {}), { handshakeTimeoutMs: 30 }));
    expect(got).toMatchObject({ code: "ACTIVATION_HANDSHAKE_TIMEOUT", path: release, message: `handshake for release ${digest} did not finish within 30 ms` });
  });

  it("a handshake that throws, even an ActivationError of its own, is ACTIVATION_HANDSHAKE_FAILED with its words and cause", async () => {
    const { store, release, digest } = setup(() => 1);
    const inner = new ActivationError("SOURCE_NOT_FOUND", "the worker could not find it");
    const got = await refusalOf(
      store.activate({ path: release, expectedEpoch: 0 }, async () => {
        throw inner;
      }),
    );
    expect(got).toMatchObject({ code: "ACTIVATION_HANDSHAKE_FAILED", path: release, message: `handshake for release ${digest} failed: the worker could not find it` });
    expect(got.cause).toBe(inner);
    const plain = await refusalOf(
      store.activate({ path: release, expectedEpoch: 0 }, async () => {
        throw "a string"; // eslint-disable-line no-throw-literal
      }),
    );
    expect(plain.message).toBe(`handshake for release ${digest} failed: a string`);
  });

  it("leaves no timer behind once the handshake has finished", async () => {
    const { store, release } = setup(() => 1);
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    let signal: AbortSignal | undefined;
    await store.activate({ path: release, expectedEpoch: 0 }, async (_r, options) => {
      signal = options.signal;
    });
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(60_000);
    expect(signal!.aborted).toBe(false);
  });

  it("a refused request given with a trailing slash still records the digest its path names", async () => {
    const { store, release, digest } = setup(() => 1);
    await refusalOf(store.activate({ path: `${release}/`, expectedEpoch: -1 }, async () => {}));
    expect(store.history().at(-1)).toMatchObject({ outcome: "refused", code: "ACTIVATION_BAD_EPOCH", digest });
  });
});

describe("a release's name", () => {
  it("must be the whole digest: a prefix before it is not a digest", () => {
    const { release, base } = setup(() => 1);
    const named = path.join(base, `x${path.basename(release)}`);
    fs.cpSync(release, named, { recursive: true });
    expect(() => verifyRelease(named)).toThrow(expect.objectContaining({ code: "RELEASE_BAD_NAME" }));
  });
});

describe("isStaleTemp", () => {
  const errno = (code: string) => Object.assign(new Error(code), { code });

  it("a writer pid that belongs to another user (EPERM) is running; one that is gone (ESRCH) is not", () => {
    const kill = vi.spyOn(process, "kill");
    kill.mockImplementation(() => {
      throw errno("EPERM");
    });
    expect(isStaleTemp(".tmp-999999-abc", 0)).toBe(false);
    kill.mockImplementation(() => {
      throw errno("ESRCH");
    });
    expect(isStaleTemp(".tmp-999999-abc", 0)).toBe(true);
    // This process is running whatever kill says: it is never asked.
    expect(isStaleTemp(`.tmp-${process.pid}-abc`, 0)).toBe(false);
  });

  it("one without a pid is stale only once older than the limit", () => {
    expect(isStaleTemp(".tmp-abc", 0, UNNAMED_TEMP_MAX_AGE_MS)).toBe(false);
    expect(isStaleTemp(".tmp-abc", 0, UNNAMED_TEMP_MAX_AGE_MS + 1)).toBe(true);
  });
});

describe("isActivationError", () => {
  it("knows an error of another installed copy by the shared brand", () => {
    const foreign = Object.defineProperty(new Error("from another copy"), Symbol.for("@klbr/activation/ActivationError"), { value: true });
    expect(isActivationError(foreign)).toBe(true);
  });
});
