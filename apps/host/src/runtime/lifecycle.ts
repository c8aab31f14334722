import type { Worker } from "@klbr/supervisor";
import { HostError } from "../errors";

/** Whether the host is stopping, as every service sees it. */
export interface Stopping {
  readonly stopping: boolean;
}

/**
 * The host's run state, shared by the services: once it stops, no worker starts, no timer fires,
 * and a route call in flight is abandoned.
 */
export class HostLife implements Stopping {
  private stopped = false;
  private readonly aborts = new AbortController();

  /** Whether stop() began. */
  get stopping(): boolean {
    return this.stopped;
  }

  /** Aborted when the host stops. */
  get signal(): AbortSignal {
    return this.aborts.signal;
  }

  /** Mark the host stopping and abort what listens; false when it already was. */
  beginStop(): boolean {
    if (this.stopped) return false;
    this.stopped = true;
    this.aborts.abort();
    return true;
  }

  /** No worker starts once the host stops. */
  refuseWhenStopping(what: string): void {
    if (this.stopped) throw new HostError("HOST_STOPPING", `the host is stopping; no ${what} worker is started`);
  }

  /** A worker that came up after stop() collected the running ones would outlive the host: shut it down. */
  async keepUnlessStopping(starting: Promise<Worker>, what: string): Promise<Worker> {
    const worker = await starting;
    if (!this.stopped) return worker;
    await worker.shutdown().catch(() => undefined);
    throw new HostError("HOST_STOPPING", `the host stopped while a ${what} worker started; it was shut down`);
  }
}
