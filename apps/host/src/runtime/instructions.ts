import { joinSources, observe, pinAtStart, resolve, sha256Hex, type Actor, type SourceInput } from "@klbr/header";
import type { HostDb } from "../db/open";
import { appendHeaderRecord, headerChain } from "../store/headers";
import type { InstructionSource } from "./contract";

/** Builds a session's full source list from its adopted sources (the skills part is fixed per generation). */
export type SourceComposer = (adopted: readonly InstructionSource[]) => SourceInput[];

/**
 * Each session's instruction header: pinned once from the instruction sources (rule 1), and
 * observed as a revision when a source changes (rule 2). The skills source changes only at a new
 * workbench generation; adopted orientation can change at any request. A change the session made
 * itself is attributed to its execution and step; anything else to the host. Folds (rule 3)
 * belong to a model driver.
 */
export class InstructionHeaders {
  /** Per session, how its sources are composed under its current generation. */
  private readonly composers = new Map<string, SourceComposer>();

  constructor(
    private readonly db: HostDb,
    private readonly now: () => number,
    private readonly adopted: (sessionId: string) => InstructionSource[],
  ) {}

  /** A new workbench generation: pin the header if the session has none, otherwise observe the change (host). */
  observeGeneration(sessionId: string, compose: SourceComposer): void {
    this.composers.set(sessionId, compose);
    this.observe(sessionId, { origin: "host", reason: "instruction sources changed at a new workbench generation" });
  }

  /**
   * Observe the session's sources now: pin when there is no header, append a revision attributed to
   * `actor` when the text changed. Returns the header digest after it, or null when the session has
   * no generation in this host yet (its first generation observes everything).
   */
  observe(sessionId: string, actor: Actor): string | null {
    const compose = this.composers.get(sessionId);
    const chain = headerChain(this.db, sessionId);
    if (!compose) return chain.length === 0 ? null : resolve(chain).digest;
    const sources = compose(this.adopted(sessionId));
    const at = this.now();
    if (chain.length === 0) {
      const pin = pinAtStart(sources, at);
      appendHeaderRecord(this.db, { sessionId, type: "header_pin", digest: pin.digest, record: pin, atMs: at });
      return pin.digest;
    }
    const revision = observe(chain, sources, actor, at);
    // Unchanged: the current digest is the digest of these sources' text.
    if (!revision) return sha256Hex(joinSources(sources));
    appendHeaderRecord(this.db, { sessionId, type: "header_revision", digest: revision.digest, record: revision, atMs: at });
    return revision.digest;
  }

  /**
   * Bring a session's header up to date with changes made outside it (another session adopted
   * orientation in its scope): observed as a host revision. Done before each of its requests; a
   * model driver calls it before assembling a request.
   */
  observeOutside(sessionId: string): string | null {
    return this.observe(sessionId, { origin: "host", reason: "instruction sources changed outside this session" });
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
