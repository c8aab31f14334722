// The C15 minimal base environment: what the host passes of its own environment to anything it
// starts. A file of its own because both the worker's command (command.ts) and the launcher's
// environment (guard-launch.ts) are built on it, and command.ts depends on the start options,
// which name guard-launch.ts's EnvHandoff: kept in command.ts, the three made an import cycle.

/** The names of the C15 minimal base environment (plus every `LC_*`). */
export const MINIMAL_ENV_NAMES = ["PATH", "HOME", "LANG", "TZ", "TMPDIR"] as const;

const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

/**
 * The C15 minimal base environment taken from `hostEnv`: PATH (a default when unset), HOME, LANG,
 * every LC_*, TZ, TMPDIR, and the names the operator passes explicitly (`passEnv`). Nothing else
 * of the host's environment (secrets set for the daemon) reaches what the host starts.
 */
export function minimalEnv(passEnv: readonly string[] = [], hostEnv: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = { PATH: hostEnv.PATH ?? DEFAULT_PATH };
  for (const [name, value] of Object.entries(hostEnv)) {
    if (value === undefined) continue;
    if ((MINIMAL_ENV_NAMES as readonly string[]).includes(name) || name.startsWith("LC_") || passEnv.includes(name)) env[name] = value;
  }
  return env;
}
