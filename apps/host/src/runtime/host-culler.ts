import { IdleCuller } from "./culling";

export { workbenchPool, type IdleCuller } from "./culling";
import type { Notify } from "./notifier";
import type { Workbenches } from "./workbenches";

/** Idle culling (C19) over a host's workbenches; each cull is a `workbench.culled` notification. */
export function hostIdleCuller(host: { workbenches: Workbenches; turns: { turnOf(sessionId: string): unknown } | null; now(): number; notifier: Notify }, idleTimeoutMs: number): IdleCuller {
  return new IdleCuller({
    idleTimeoutMs,
    all: () => host.workbenches.all(),
    turnRunning: (sessionId) => host.turns?.turnOf(sessionId) != null,
    onCulled: (bench, idleMs) => {
      bench.culledAtMs = host.now();
      host.notifier.notify({ type: "workbench.culled", session_id: bench.sessionId, generation: bench.generation ?? "", idle_ms: Math.round(idleMs), at_ms: bench.culledAtMs });
    },
  });
}
