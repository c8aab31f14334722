import { existsSync } from "node:fs";
import { ControlClient } from "../control/client";
import { dataLayout, defaultDataDir } from "../paths";
import type { ExecutionReport } from "../runtime/host";
import { newId } from "../runtime/ids";
import type { CommonOptions } from "./command";
import { checkKlbrPython } from "./python-check";

/** What a CLI command talks to: the running daemon, or a host embedded in the command. */
export interface Target {
  readonly embedded: boolean;
  /** Run one cell in a session's workbench (default: the root session). */
  execute(code: string, session?: string): Promise<ExecutionReport>;
  say(text: string, session?: string): Promise<{ event_id: number; attention: unknown }>;
  /**
   * Interrupt this target's own cell (Ctrl-C), by its execution id: a running one through the C7
   * ladder, a queued one so that it never runs. Another client's cell in the session is never
   * touched; with no cell of ours in flight this is `not_running`. (`session` is kept for callers.)
   */
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

/** The cells this client has in flight, named by ids it chose, so its Ctrl-C reaches only them. */
export class OwnCells {
  private readonly inFlight = new Set<string>();

  /** Run one cell under a fresh id. */
  async run<T>(execute: (id: string) => Promise<T>): Promise<T> {
    const id = newId("ex");
    this.inFlight.add(id);
    try {
      return await execute(id);
    } finally {
      this.inFlight.delete(id);
    }
  }

  /** Interrupt the most recent cell of ours still in flight, if any. */
  async interrupt(send: (id: string) => Promise<unknown>): Promise<unknown> {
    const id = [...this.inFlight].at(-1);
    return id === undefined ? { rung: "not_running" } : send(id);
  }
}

/** The daemon when one runs, otherwise an embedded host on the same data directory. */
export async function openTarget(opts: CommonOptions, onEmbedded?: () => void, embedded: { drive?: { route?: string } } = {}): Promise<Target> {
  const own = new OwnCells();
  const client = await connectDaemon(opts);
  if (client) {
    return {
      embedded: false,
      execute: (code, session) => own.run((id) => client.request({ op: "exec", code, execution_id: id, ...(session ? { session } : {}) }) as Promise<ExecutionReport>),
      say: (text, session) => client.request({ op: "say", text, ...(session ? { session } : {}) }) as Promise<{ event_id: number; attention: unknown }>,
      interrupt: () => own.interrupt((id) => client.request({ op: "interrupt", execution_id: id })),
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
    execute: (code, session) => own.run((id) => host.execute(code, session, { executionId: id })),
    say: (text, session) => host.postInput(text, session ? { sessionId: session } : {}),
    interrupt: () => own.interrupt((id) => host.interrupt({ executionId: id })),
    status: async () => host.status(),
    subscribe: async (onEvent) => void host.subscribe(onEvent),
    close: () => host.stop(),
  };
}
