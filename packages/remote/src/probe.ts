import { RemoteError } from "./errors.js";
import { shellJoin } from "./ssh-argv.js";
import { sshRun } from "./ssh-run.js";
import type { Target } from "./targets.js";

/** What `klbr target test` reports. */
export interface ProbeResult {
  target: string;
  /** The remote interpreter's version, `major.minor.micro`. */
  python: string;
  /** Whether that interpreter can run the worker (3.11 or newer). */
  python_ok: boolean;
  /** Wall time of the whole ssh round trip (connect, authenticate, run, exit), ms. */
  round_trip_ms: number;
}

/** Connect to `target`, ask its python for its version, time the round trip. */
export async function probeTarget(target: Target): Promise<ProbeResult> {
  const started = performance.now();
  const result = await sshRun(target, shellJoin([target.python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"]));
  const roundTrip = performance.now() - started;
  const version = result.stdout.trim();
  if (result.exitCode !== 0 || !/^\d+\.\d+\.\d+$/.test(version)) {
    throw new RemoteError("REMOTE_PYTHON_MISSING", `target ${JSON.stringify(target.name)}: cannot run ${JSON.stringify(target.python)} (exit ${result.exitCode}): ${result.stderr.trim().slice(-500)}`);
  }
  const [major, minor] = version.split(".").map(Number) as [number, number];
  return { target: target.name, python: version, python_ok: major > 3 || (major === 3 && minor >= 11), round_trip_ms: Math.round(roundTrip * 10) / 10 };
}
