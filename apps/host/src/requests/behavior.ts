import { realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join } from "node:path";
import type { RequestContext } from "./context";
import { invalidRequest } from "./errors";

/** A release directory is named after its source digest (C2). */
const DIGEST = /^[0-9a-f]{64}$/;

/**
 * The only directories that may be activated are `<data>/releases/<digest>`: the real path (every
 * symlink resolved) must be a direct child of the real releases directory, named like a digest.
 * A directory named after its digest anywhere else on disk is refused.
 */
export async function releasePathOf(dataDir: string, path: string): Promise<string> {
  if (typeof path !== "string" || !isAbsolute(path)) throw invalidRequest(`path must be an absolute <data>/releases/<digest> path, got ${JSON.stringify(path)}`);
  const releases = await realpath(join(dataDir, "releases")).catch(() => null);
  const real = await realpath(path).catch(() => null);
  if (releases === null || real === null || dirname(real) !== releases || !DIGEST.test(basename(real))) {
    throw invalidRequest(`only ${join(dataDir, "releases")}/<digest> may be activated, got ${JSON.stringify(path)}${real && real !== path ? ` (really ${JSON.stringify(real)})` : ""}`);
  }
  return real;
}

/** behavior.activate: the path check, then the candidate handshake, then the epoch compare-and-swap. */
export async function behaviorActivate(ctx: RequestContext, params: { path: string; expected_epoch: number }): Promise<unknown> {
  const path = await releasePathOf(ctx.host.dataDir, params.path);
  return ctx.host.hooks.activate(path, params.expected_epoch);
}
