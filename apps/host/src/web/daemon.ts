// The web view's way to the running daemon: its control socket, as every surface (C23). The page
// reads the durable log itself; only what the log cannot say comes from here: the workbenches'
// states, live output, and the interrupt.
import { ControlClient } from "../control/client";

/** A lazily opened control connection, opened again after the daemon went away. */
export class DaemonLink {
  private client: Promise<ControlClient | null> | null = null;

  constructor(private readonly socketPath: string) {}

  /** The connection, or null when no daemon answers now. */
  connect(): Promise<ControlClient | null> {
    if (!this.client) {
      this.client = ControlClient.connect(this.socketPath).then(
        (client) => {
          void client.closed.then(() => (this.client = null));
          return client;
        },
        () => {
          this.client = null;
          return null;
        },
      );
    }
    return this.client;
  }

  /** One request on the shared connection; null when no daemon answers. */
  async request(op: Parameters<ControlClient["request"]>[0]): Promise<unknown> {
    const client = await this.connect();
    return client ? client.request(op) : null;
  }

  /** A connection of its own (a live stream has its own watches, closed with it), or null. */
  async dedicated(): Promise<ControlClient | null> {
    return ControlClient.connect(this.socketPath).catch(() => null);
  }

  /** Close the shared connection. */
  async close(): Promise<void> {
    const client = await this.client;
    client?.close();
    this.client = null;
  }
}

/** Per session, what the daemon's status says of its workbench: state and running cell. */
export async function sessionStates(link: DaemonLink): Promise<Map<string, { state: string; running: string | null; generation: string | null }> | null> {
  const status = (await link.request({ op: "status" }).catch(() => null)) as { sessions?: Array<{ session_id: string; state: string; running: string | null; generation: string | null }> } | null;
  if (!status?.sessions) return null;
  return new Map(status.sessions.map((s) => [s.session_id, { state: s.state, running: s.running, generation: s.generation }]));
}
