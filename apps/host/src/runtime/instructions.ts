import { joinSources, observe, pinAtStart, resolve, sha256Hex, type Actor, type SourceInput } from "@klbr/header";
import type { Store } from "../store/api";
import type { HeaderPlan } from "../store/api/headers";
import type { InstructionSource } from "./contract";
import { adoptedSources } from "./orientation-sources";

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
    private readonly store: Pick<Store, "observeHeader" | "headerChain">,
    private readonly now: () => number,
  ) {}

  /** A new workbench generation: pin the header if the session has none, otherwise observe the change (host). */
  async observeGeneration(sessionId: string, compose: SourceComposer): Promise<void> {
    // Set before any await: an observation asked meanwhile composes under this generation.
    this.composers.set(sessionId, compose);
    await this.observe(sessionId, { origin: "host", reason: "instruction sources changed at a new workbench generation" });
  }

  /**
   * Observe the session's sources now: pin when there is no header, append a revision attributed to
   * `actor` when the text changed. Returns the header digest after it, or null when the session has
   * no generation in this host yet (its first generation observes everything). The chain, the
   * adopted sources and the append are one store write (HeadersStore.observeHeader).
   */
  observe(sessionId: string, actor: Actor): Promise<string | null> {
    const at = this.now();
    return this.store.observeHeader(sessionId, this.plan(sessionId, actor, at), at);
  }

  /**
   * The same observation as a plan for a store transaction that records something with it:
   * orientation.adopt records the adoption and the adopting session's revision in one transaction
   * (OrientationStore.adoptCandidate), the plan reading the sources with the adoption in them.
   */
  observation(sessionId: string, actor: Actor): { plan: HeaderPlan<string | null>; atMs: number } {
    const at = this.now();
    return { plan: this.plan(sessionId, actor, at), atMs: at };
  }

  /** What an observation appends to `chain` under the session's composer as it is now (pure, see HeaderPlan). */
  private plan(sessionId: string, actor: Actor, at: number): HeaderPlan<string | null> {
    const compose = this.composers.get(sessionId);
    return (chain, adopted) => {
      const links = chain as Parameters<typeof resolve>[0];
      if (!compose) return { append: null, result: links.length === 0 ? null : resolve(links).digest };
      const sources = compose(adoptedSources(adopted));
      if (links.length === 0) {
        const pin = pinAtStart(sources, at);
        return { append: { type: "header_pin", digest: pin.digest, record: pin }, result: pin.digest };
      }
      const revision = observe(links, sources, actor, at);
      // Unchanged: the current digest is the digest of these sources' text.
      if (!revision) return { append: null, result: sha256Hex(joinSources(sources)) };
      return { append: { type: "header_revision", digest: revision.digest, record: revision }, result: revision.digest };
    };
  }

  /**
   * Bring a session's header up to date with changes made outside it (another session adopted
   * orientation in its scope): observed as a host revision. Done before each of its requests; a
   * model driver calls it before assembling a request.
   */
  observeOutside(sessionId: string): Promise<string | null> {
    return this.observe(sessionId, { origin: "host", reason: "instruction sources changed outside this session" });
  }

  /** runtime.instructions: the exact current text, and where the chain stopped if a link did not reconstruct. */
  async current(sessionId: string): Promise<unknown> {
    const chain = (await this.store.headerChain(sessionId)) as Parameters<typeof resolve>[0];
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
