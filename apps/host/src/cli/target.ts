import { existsSync } from "node:fs";
import { ControlClient } from "../control/client";
import { dataLayout, defaultDataDir } from "../paths";
import type { ExecutionReport } from "../runtime/host";
import type { CommonOptions } from "./command";
import { checkKlbrPython } from "./python-check";

/** What a CLI command talks to: the running daemon, or a host embedded in the command. */
export interface Target {
  readonly embedded: boolean;
  /** Run one cell in a session's workbench (default: the root session). */
  execute(code: string, session?: string): Promise<ExecutionReport>;
  say(text: string, session?: string): Promise<{ event_id: number; attention: unknown }>;
  /** Interrupt whatever cell runs in the session (Ctrl-C; default: the root session). */
  interrupt(session?: string): Promise<unknown>;
  status(): Promise<unknown>;
  subscribe(onEvent: (event: unknown) => void): Promise<void>;
  close(): Promise<void>;
}

export type { CommonOptions } from "./command";

/** The data directory a command uses. */
export function dataDirOf(opts: CommonOptions): string {
  return opts.dataDir ?? defaultDataDir();
}

/** Connect to the daemon of this data directory, or return null when none answers. */
export async function connectDaemon(opts: CommonOptions): Promise<ControlClient | null> {
  const socket = dataLayout(dataDirOf(opts)).controlSocket;
  if (!existsSync(socket)) return null;
  try {
    return await ControlClient.connect(socket);
  } catch {
    return null; // a stale socket file from a daemon that died
  }
}

/** The daemon when one runs, otherwise an embedded host on the same data directory. */
export async function openTarget(opts: CommonOptions, onEmbedded?: () => void, embedded: { drive?: { route?: string } } = {}): Promise<Target> {
  const client = await connectDaemon(opts);
  if (client) {
    return {
      embedded: false,
      execute: (code, session) => client.request({ op: "exec", code, ...(session ? { session } : {}) }) as Promise<ExecutionReport>,
      say: (text, session) => client.request({ op: "say", text, ...(session ? { session } : {}) }) as Promise<{ event_id: number; attention: unknown }>,
      interrupt: (session) => client.request({ op: "interrupt", ...(session ? { session } : {}) }),
      status: () => client.request({ op: "status" }),
      subscribe: (onEvent) => client.subscribe(onEvent),
      close: async () => client.close(),
    };
  }
  checkKlbrPython();
  onEmbedded?.();
  const { Host } = await import("../runtime/host");
  const host = await Host.start({ dataDir: dataDirOf(opts), ...(embedded.drive ? { drive: embedded.drive } : {}), ...(opts.workspace ? { workspace: opts.workspace } : {}) });
  return {
    embedded: true,
    execute: (code, session) => host.execute(code, session),
    say: (text, session) => host.postInput(text, session ? { sessionId: session } : {}),
    interrupt: (session) => host.interrupt(session ? { sessionId: session } : {}),
    status: async () => host.status(),
    subscribe: async (onEvent) => void host.subscribe(onEvent),
    close: () => host.stop(),
  };
}
