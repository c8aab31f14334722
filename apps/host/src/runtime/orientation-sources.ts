import type { AdoptedRows } from "../store/api/headers";
import type { InstructionSource } from "./contract";

/**
 * The adopted orientation sources a session runs under, in header order (C11): sorted by target,
 * and for one target the global adoption before the session's own. A source is named by its
 * target; when both scopes adopted the same target the session's is `<target> (session)`, since
 * two sources of one header cannot share a name. A text without a final newline gets one in the
 * header, so the next source starts on its own line (the candidate keeps its exact bytes).
 * Pure: the rows are the store's (HeadersStore.observeHeader reads them with the chain).
 */
export function adoptedSources(adopted: AdoptedRows): InstructionSource[] {
  const global = adopted.global.map((s) => ({ target: s.target, session: false, text: s.text }));
  const own = adopted.own.map((s) => ({ target: s.target, session: true, text: s.text }));
  const globalTargets = new Set(global.map((s) => s.target));
  return [...global, ...own]
    .sort((a, b) => (a.target < b.target ? -1 : a.target > b.target ? 1 : Number(a.session) - Number(b.session)))
    .map((s) => ({
      name: s.session && globalTargets.has(s.target) ? `${s.target} (session)` : s.target,
      text: s.text.endsWith("\n") ? s.text : `${s.text}\n`,
    }));
}
