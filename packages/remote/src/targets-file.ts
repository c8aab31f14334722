import { randomBytes } from "node:crypto";
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RemoteError } from "./errors.js";
import { parseTargets, type TargetsFile } from "./targets.js";

/** `<data>/targets.json`. */
export function targetsPath(dataDir: string): string {
  return join(dataDir, "targets.json");
}

/** Read and validate `<data>/targets.json`; an absent file is an empty list. */
export function readTargets(dataDir: string): TargetsFile {
  const file = targetsPath(dataDir);
  let text: string;
  try {
    // Stryker disable next-line StringLiteral: with no encoding readFileSync returns a Buffer, which JSON.parse reads as the same UTF-8 text
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { targets: [] };
    throw new RemoteError("REMOTE_TARGETS_INVALID", `cannot read ${file}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RemoteError("REMOTE_TARGETS_INVALID", `${file} is not JSON: ${(error as Error).message}`);
  }
  return parseTargets(value);
}

/** Write `<data>/targets.json` whole (0600, through a temporary file and a rename). */
export function writeTargets(dataDir: string, value: TargetsFile): void {
  const valid = parseTargets(value);
  const file = targetsPath(dataDir);
  const temp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    writeFileSync(temp, `${JSON.stringify(valid, null, 2)}\n`, { mode: 0o600, flag: "wx" });
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}
