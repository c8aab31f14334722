import { HostError } from "../errors";

/** How workers run: as ordinary processes of the host's user, or in a bubblewrap sandbox. */
export type SandboxMode = "none" | "bwrap";

/** A host's sandbox settings, resolved from its options and the environment. */
export interface SandboxSettings {
  mode: SandboxMode;
  /** Whether sandboxed processes may use the network; always true when mode is none. */
  network: boolean;
  /** The bwrap program (KLBR_BWRAP, default `bwrap` on PATH). */
  bwrap: string;
  /** The size of the sandbox's fresh /tmp (the `tmp` limit of C17), when set. */
  tmpBytes?: number;
}

/** What `klbr status` and `runtime.inspect` say about a worker's sandbox. */
export interface SandboxView {
  mode: SandboxMode;
  network: boolean;
}

/** The option values a caller gives (HostOptions, CLI flags); unset ones come from the environment. */
export interface SandboxChoice {
  sandbox?: string;
  network?: boolean | string;
}

const ON = new Set(["on", "true", "1", "yes"]);
const OFF = new Set(["off", "false", "0", "no"]);

/**
 * Resolve the settings: options first, then KLBR_SANDBOX / KLBR_SANDBOX_NETWORK / KLBR_BWRAP.
 * A value that is not understood, or the network turned off with no sandbox to enforce it, is
 * SANDBOX_INVALID: a host never runs with less isolation than it was asked for.
 */
export function sandboxSettings(choice: SandboxChoice = {}, env: NodeJS.ProcessEnv = process.env): SandboxSettings {
  const rawMode = choice.sandbox ?? (env.KLBR_SANDBOX || undefined) ?? "none";
  if (rawMode !== "none" && rawMode !== "bwrap") {
    throw new HostError("SANDBOX_INVALID", `sandbox must be "none" or "bwrap", got ${JSON.stringify(rawMode)} (--sandbox or KLBR_SANDBOX)`);
  }
  const rawNetwork = choice.network ?? (env.KLBR_SANDBOX_NETWORK || undefined) ?? true;
  let network: boolean;
  if (typeof rawNetwork === "boolean") network = rawNetwork;
  else if (ON.has(rawNetwork.toLowerCase())) network = true;
  else if (OFF.has(rawNetwork.toLowerCase())) network = false;
  else throw new HostError("SANDBOX_INVALID", `network must be on or off, got ${JSON.stringify(rawNetwork)} (--network or KLBR_SANDBOX_NETWORK)`);
  if (!network && rawMode === "none") {
    throw new HostError("SANDBOX_INVALID", "network off needs a sandbox to enforce it: add --sandbox bwrap (or KLBR_SANDBOX=bwrap)");
  }
  return { mode: rawMode, network, bwrap: env.KLBR_BWRAP || "bwrap" };
}
