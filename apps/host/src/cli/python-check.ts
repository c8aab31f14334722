import { accessSync, constants, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { HostError } from "../errors";

/**
 * Refuse a KLBR_PYTHON that names no executable file before a host starts, so the error names the
 * variable instead of surfacing as a failed worker handshake.
 */
export function checkKlbrPython(env: NodeJS.ProcessEnv = process.env): void {
  const value = env.KLBR_PYTHON;
  if (!value) return;
  const candidates = value.includes("/") ? [resolve(value)] : (env.PATH ?? "").split(":").filter(Boolean).map((dir) => join(dir, value));
  for (const file of candidates) {
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return;
    } catch {
      // not this one
    }
  }
  throw new HostError("PYTHON_NOT_FOUND", `KLBR_PYTHON=${JSON.stringify(value)} is not an executable file${value.includes("/") ? "" : " on PATH"}`);
}
