import { observe, pinAtStart, resolve, type SourceInput } from "@klbr/header";
import type { HostDb } from "../db/open";
import { appendHeaderRecord, headerChain } from "../store/headers";

/**
 * Each session's instruction header: pinned once from the instruction sources (rule 1), and
 * observed as a revision when a source changes (rule 2, attributed to the host: nothing in the
 * transcript made the change). Folds (rule 3) belong to a model driver, which this host has not.
 */
export class InstructionHeaders {
  constructor(
    private readonly db: HostDb,
    private readonly now: () => number,
  ) {}

  /** Pin the header if the session has none, otherwise record a revision if the sources changed. */
  observeSources(sessionId: string, sources: SourceInput[]): void {
    const chain = headerChain(this.db, sessionId);
    const at = this.now();
    if (chain.length === 0) {
      const pin = pinAtStart(sources, at);
      appendHeaderRecord(this.db, { sessionId, type: "header_pin", digest: pin.digest, record: pin, atMs: at });
      return;
    }
    const revision = observe(chain, sources, { origin: "host", reason: "instruction sources changed at a new workbench generation" }, at);
    if (revision) appendHeaderRecord(this.db, { sessionId, type: "header_revision", digest: revision.digest, record: revision, atMs: at });
  }

  /** runtime.instructions: the exact current text, and where the chain stopped if a link did not reconstruct. */
  current(sessionId: string): unknown {
    const chain = headerChain(this.db, sessionId);
    const resolution = resolve(chain);
    return {
      text: resolution.text,
      digest: resolution.digest,
      links: chain.length,
      complete: resolution.complete,
      stopped: resolution.stopped,
    };
  }
}
