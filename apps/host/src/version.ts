import { readFileSync } from "node:fs";
import { join } from "node:path";
import { hostPackageRoot } from "./paths";

let cached: string | undefined;

/** The version of @klbr/host (what `klbr --version` prints, and what a worker's hello is compared with). */
export function hostVersion(): string {
  cached ??= (JSON.parse(readFileSync(join(hostPackageRoot(), "package.json"), "utf8")) as { version: string }).version;
  return cached;
}
