import { readFileSync } from "node:fs";
import { join } from "node:path";
import { RemoteError } from "./errors.js";
import { encodeBundle, type RuntimeBundle } from "./bundle.js";
import { shellJoin } from "./ssh-argv.js";
import { sshRun } from "./ssh-run.js";
import type { Target } from "./targets.js";

/** Where a runtime lives on a target, and whether this call copied it. */
export interface InstalledRuntime {
  digest: string;
  /** `<workdir>/klbr-<digest>`: the remote worker's PYTHONPATH. */
  dir: string;
  /** True when the runtime was absent and copied now (cold), false when it was there (warm). */
  copied: boolean;
  /** The remote interpreter's version, `major.minor.micro`. */
  python: string;
}

/** `python/klbr/remote_install.py`: sent as `-c` text, since the runtime it installs is not there yet. */
export function installScript(pythonDir: string): string {
  return readFileSync(join(pythonDir, "klbr", "remote_install.py"), "utf8");
}

/**
 * Make sure `<workdir>/klbr-<digest>` exists on `target`: one ssh round trip when it does; when it
 * does not, the bundle follows on the same connection's stdin, is checked against its digest
 * there and renamed into place (a half copy is never taken for a runtime).
 */
export async function ensureRuntime(target: Target, bundle: RuntimeBundle, script: string): Promise<InstalledRuntime> {
  /** The script's answer: absent (so copied now) or present; undefined until it gives one. */
  let copied: boolean | undefined;
  let python = "";
  const command = shellJoin([target.python, "-c", script, target.workdir, bundle.digest]);
  const result = await sshRun(target, command, (line, stdin) => {
    const version = /^klbr\.install python=(\S+)$/.exec(line);
    if (version) {
      python = version[1]!;
      return;
    }
    if (line === "klbr.install absent") {
      copied = true;
      stdin.write(encodeBundle(bundle));
      return "end";
    }
    if (line === "klbr.install present") {
      copied = false;
      return "end";
    }
  });
  const where = `target ${JSON.stringify(target.name)}`;
  // No version line means the script did not run, whatever the status: exit 0 included (an
  // interpreter that ignored its -c text); 127 is the shell's "not found".
  if (result.exitCode === 127 || !python) {
    throw new RemoteError("REMOTE_PYTHON_MISSING", `${where}: cannot run ${JSON.stringify(target.python)} (exit ${result.exitCode}): ${result.stderr.trim().slice(-500)}`);
  }
  if (result.exitCode === 3) throw new RemoteError("REMOTE_PYTHON_TOO_OLD", `${where}: python ${python} is older than 3.11`);
  if (result.exitCode !== 0) {
    throw new RemoteError("REMOTE_INSTALL_FAILED", `${where}: installing the runtime failed (exit ${result.exitCode}): ${result.stderr.trim().slice(-500)}`);
  }
  // Exit 0 is success only after an answer: without one, nothing says the runtime is there.
  if (copied === undefined) throw new RemoteError("REMOTE_INSTALL_FAILED", `${where}: the install script exited 0 without saying whether the runtime is there`);
  return { digest: bundle.digest, dir: `${target.workdir}/klbr-${bundle.digest}`, copied, python };
}
