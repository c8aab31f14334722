// C20 inside the host: a running cell's displays (its own, and those of the remote cells it calls)
// are numbered, stored (the Store's storeDisplay: blobs and the execution's list in one
// transaction, as each arrives, so a live watcher can fetch what it is told about) and published
// to the clients watching the execution, in order with its output (cell-order.ts: output behind a
// display still being stored waits for it). The completion then says how many the cell could not
// show: the worker's displays_dropped plus any the host did not list.
import type { DisplayListener, OutputListener } from "@klbr/supervisor";
import type { Store } from "../store/api";
import { prepareDisplay, type DisplayRef } from "../store/displays";
import { CellOrder } from "./cell-order";
import { noteIncident } from "./incident-note";
import type { LiveExecution } from "./live-execution";
import type { LiveDisplayEvent } from "./live-output";

/** C20: at most 32 displays per cell; an execution's list (its remote cells' displays included) keeps to it. */
export const MAX_DISPLAYS = 32;

/** The execution displays belong to. */
export type DisplayOwner = Pick<LiveExecution, "id" | "sessionId" | "ended">;

/** What the recorder needs of the host. */
export interface DisplayDeps {
  store: Pick<Store, "storeDisplay" | "recordIncident">;
  now(): number;
  /** Where live display events go (the live output hub); null when the host streams nothing. */
  publish: ((event: LiveDisplayEvent) => void) | null;
}

interface Shown {
  refs: DisplayRef[];
  /** Displays the host did not list: past MAX_DISPLAYS, a storage failure, or a remote cell's own dropped count. */
  dropped: number;
  /** The execution's output and displays in the worker's order. */
  order: CellOrder;
}

/** Records every running execution's displays. */
export class DisplayRecorder {
  /** Keyed weakly, like live output's counters: an execution that is gone takes its list along. */
  private readonly shown = new WeakMap<DisplayOwner, Shown>();

  constructor(private readonly deps: DisplayDeps) {}

  /**
   * The listener a worker's displays for `owner` go to (its own cell's, or a remote cell it called).
   * Called synchronously in the worker's order; a display after the execution ended (a remote cell
   * an abandoned task started) is not its any more and is dropped unstored. Each is numbered,
   * stored and published in the execution's order, after the displays before it were stored.
   */
  forExecution(owner: DisplayOwner): DisplayListener {
    const shown = this.state(owner);
    return (display) => {
      if (owner.ended) return;
      shown.order.run(async () => {
        if (shown.refs.length >= MAX_DISPLAYS) {
          shown.dropped += 1;
          return;
        }
        const prepared = prepareDisplay(display, shown.refs.length);
        const listed = [...shown.refs, prepared.ref];
        try {
          await this.deps.store.storeDisplay(owner.sessionId, owner.id, prepared, listed, this.deps.now());
        } catch (error) {
          // Nothing of it was written (one transaction): counted as not shown, and the cell goes on.
          shown.dropped += 1;
          noteIncident(this.deps.store, "display.store_failed", { execution_id: owner.id, error: String(error) }, this.deps.now());
          return;
        }
        shown.refs = listed;
        this.deps.publish?.({ type: "display", execution_id: owner.id, session: owner.sessionId, session_id: owner.sessionId, display: prepared.ref });
      });
    };
  }

  /**
   * `owner`'s live output listener in order with its displays: a message that arrives while a
   * display before it is still being stored reaches the clients after that display. Output after
   * the execution ended is dropped on arrival, as the listener itself would.
   */
  output(owner: DisplayOwner, listener: OutputListener): OutputListener {
    const { order } = this.state(owner);
    return (message) => {
      if (owner.ended) return;
      order.run(() => listener(message));
    };
  }

  /** Resolves once everything `owner`'s worker sent so far was stored and published (the cell's end waits for it). */
  settled(owner: DisplayOwner): Promise<void> {
    return this.shown.get(owner)?.order.settled() ?? Promise.resolve();
  }

  /** A remote cell of `owner` reported displays it could not send: they count as the caller's. */
  addDropped(owner: DisplayOwner, count: number): void {
    if (count > 0) this.state(owner).dropped += count;
  }

  /** The execution is over: its displays_dropped, with the worker's own count (absent when the worker sent none). */
  dropped(owner: DisplayOwner, workerCount: number | undefined): number {
    return (this.shown.get(owner)?.dropped ?? 0) + (workerCount ?? 0);
  }

  private state(owner: DisplayOwner): Shown {
    let shown = this.shown.get(owner);
    if (!shown) this.shown.set(owner, (shown = { refs: [], dropped: 0, order: new CellOrder() }));
    return shown;
  }
}
