import { execFileSync } from "node:child_process";

let cached: string | undefined;

/**
 * The Python interpreter to start workers with: `KLBR_PYTHON` when set, else the real
 * `sys.executable` behind `python3`, resolved once and cached (python3 may be a slow pyenv shim).
 */
export function resolvePython(): string {
  const fromEnv = process.env.KLBR_PYTHON;
  if (fromEnv) return fromEnv;
  if (cached !== undefined) return cached;
  try {
    const out = execFileSync("python3", ["-c", "import sys; print(sys.executable)"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 10_000,
    }).trim();
    cached = out.length > 0 ? out : "python3";
  } catch {
    cached = "python3";
  }
  return cached;
}
