import type { CellSlot } from "./cells.js";
import type { HookCalls } from "./hooks.js";
import type { HostRequests } from "./host-requests.js";
import type { InboundOf, InboundRoutes } from "./inbound.js";
import type { CellDisplays } from "./display.js";
import type { LiveOutputs } from "./live-output.js";

/** The parts of a worker its messages go to once it said hello. */
export interface RouteTargets {
  readonly requests: HostRequests;
  readonly cells: CellSlot;
  readonly hooks: HookCalls;
  /** C16: the sequence rules of `output` and the running cell's listener. */
  readonly live: LiveOutputs;
  /** C20: the sequence rules of `display` and the running cell's listener. */
  readonly displays: CellDisplays;
  /** A graceful shutdown is under way: a cell the worker completes now ended by `shutdown`. */
  shuttingDown(): boolean;
  invalidate(reason: string, detail: string): void;
}

/**
 * A running worker's routes, one per message kind it may send after its hello (inbound.ts
 * dispatches them; any other kind invalidates the generation). A new kind is one more entry here.
 */
export function workerRoutes(to: RouteTargets): InboundRoutes {
  return {
    host_request: (message) => to.requests.handle(message),
    completed: (message) => complete(message, to),
    output: (message) => {
      const violation = to.live.output(message);
      if (violation) to.invalidate("protocol_violation", `output: ${violation}`);
    },
    display: (message) => {
      const violation = to.displays.display(message);
      if (violation) to.invalidate("protocol_violation", `display: ${violation}`);
    },
  };
}

/** A completion ends the running cell or the hook call in flight; for any other id it is a protocol violation. */
function complete(message: InboundOf<"completed">, to: RouteTargets): void {
  const run = to.cells.run;
  if (run && run.op.id === message.id) {
    // Its output ends here (C16): a later one for this id invalidates the generation.
    to.live.completed(message.id);
    // Its displays end here too (C20), and its displays_dropped must fit what was negotiated and sent.
    const dropped = to.displays.completed(message.id, message.result);
    if (dropped) {
      to.invalidate("protocol_violation", `completed: ${dropped}`);
      return;
    }
    const violation = to.cells.complete(run, message.result, to.shuttingDown());
    if (violation) to.invalidate("protocol_violation", violation);
    return;
  }
  const call = to.hooks.inFlight;
  if (call && call.op.id === message.id) {
    to.hooks.complete(call, message.result);
    return;
  }
  to.invalidate("protocol_violation", `completion for unknown operation ${JSON.stringify(message.id)}`);
}
