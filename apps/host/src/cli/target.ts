import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { ControlClient } from "../control/client";
import { HostError } from "../errors";
import { dataLayout, defaultDataDir } from "../paths";
import type { ExecutionReport } from "../runtime/completion";
import { newId } from "../runtime/ids";
import type { CommonOptions } from "./command";
import { isLiveDisplayEvent, isLiveOutputEvent, type LiveEvent, type LiveOutputEvent } from "./live-output";
import { checkKlbrPython } from "./python-check";

/** @klbr/envelope's MAX_CELL_SOURCE_BYTES, kept here so talking to a daemon does not load valibot (a CLI test pins both edges). */
const MAX_CELL_SOURCE_BYTES = 262_144;

function oversize(code: string): number | null {
  const bytes = Buffer.byteLength(code);
  return bytes > MAX_CELL_SOURCE_BYTES ? bytes : null;
}

/** What a CLI command talks to: the running daemon, or a host embedded in the command. */
export interface Target {
  readonly embedded: boolean;
  /**
   * Run one cell in a session's workbench (default: the root session). With `onOutput`, its live
   * output (C16) and its displays (C20) are handed over as they arrive, all before the report resolves.
   */
  execute(code: string, session?: string, onOutput?: (event: LiveEvent) => void): Promise<ExecutionReport>;
  /** Live output of one session's cells (or every cell's) until the target closes; false when the host streams none. */
  watchOutput(filter: { session?: string }, onOutput: (event: LiveOutputEvent) => void): Promise<boolean>;
  say(text: string, session?: string): Promise<{ event_id: number; attention: unknown }>;
  /**
   * Interrupt this target's own cell (Ctrl-C), by its execution id: a running one through the C7
   * ladder, a queued one so that it never runs. Another client's cell in the session is never
   * touched; with no cell of ours in flight this is `not_running`. (`session` is kept for callers.)
   */
  interrupt(session?: string): Promise<unknown>;
  /** Stop the session's running model turn (klbr chat's Ctrl-C): whether one was running. */
  stopTurn(session: string): Promise<{ stopping: boolean }>;
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

/** `-w DIR` names the workspace cells run in: a daemon serving another one would silently ignore it. */
async function refuseOtherWorkspace(client: ControlClient, workspace: string): Promise<void> {
  const served = ((await client.request({ op: "status" })) as { workspace?: string }).workspace;
  if (served !== undefined && resolve(served) !== resolve(workspace)) {
    client.close();
    throw new HostError("WORKSPACE_MISMATCH", `the running daemon serves workspace ${served}, not ${resolve(workspace)} (-w)`);
  }
}

/** The daemon when one runs, otherwise an embedded host on the same data directory. */
export async function openTarget(opts: CommonOptions, onEmbedded?: () => void, embedded: { drive?: { route?: string } } = {}): Promise<Target> {
  const own = new OwnCells();
  const client = await connectDaemon(opts);
  if (client) {
    if (opts.workspace !== undefined) await refuseOtherWorkspace(client, opts.workspace);
    return {
      embedded: false,
      execute: (code, session, onOutput) => {
        // Over the limit, it may not fit a control frame either: the daemon records the refusal from its size.
        const bytes = oversize(code);
        if (bytes !== null) return client.request({ op: "refuse_cell", bytes, ...(session ? { session } : {}) }) as Promise<never>;
        return own.run(async (id) => {
          // The daemon pushes the cell's output on this connection before its reply.
          const stop = onOutput ? client.listen((event) => (isLiveOutputEvent(event) || isLiveDisplayEvent(event)) && event.execution_id === id && onOutput(event)) : undefined;
          try {
            return (await client.request({ op: "exec", code, execution_id: id, ...(onOutput ? { live: true } : {}), ...(session ? { session } : {}) })) as ExecutionReport;
          } finally {
            stop?.();
          }
        });
      },
      watchOutput: (filter, onOutput) =>
        client.watchOutput(filter.session ? { session: filter.session } : {}, (event) => isLiveOutputEvent(event) && (filter.session === undefined || event.session_id === filter.session) && onOutput(event)),
      say: (text, session) => client.request({ op: "say", text, ...(session ? { session } : {}) }) as Promise<{ event_id: number; attention: unknown }>,
      interrupt: () => own.interrupt((id) => client.request({ op: "interrupt", execution_id: id })),
      stopTurn: (session) => client.request({ op: "stop_turn", session }) as Promise<{ stopping: boolean }>,
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
    execute: (code, session, onOutput) =>
      own.run(async (id) => {
        const stop = onOutput ? host.liveOutput?.watch({ executionId: id }, onOutput, onOutput) : undefined;
        try {
          return await host.execute(code, session, { executionId: id });
        } finally {
          stop?.();
        }
      }),
    watchOutput: async (filter, onOutput) => {
      if (!host.liveOutput) return false;
      host.liveOutput.watch(filter.session ? { sessionId: filter.session } : {}, onOutput);
      return true;
    },
    say: (text, session) => host.postInput(text, session ? { sessionId: session } : {}),
    interrupt: () => own.interrupt((id) => host.interrupt({ executionId: id })),
    stopTurn: async (session) => ({ stopping: host.turns?.stopTurn(session) ?? false }),
    status: async () => host.status(),
    subscribe: async (onEvent) => void host.subscribe(onEvent),
    close: () => host.stop(),
  };
}
