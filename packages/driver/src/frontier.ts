/** One section of a frontier block, as a host section provider returns it. */
export interface FrontierSection {
  /** A short lowercase title: `pending inputs`, `open waits`, `open work items`, ... */
  title: string;
  /** The section's lines, already rendered; an empty list reads `(none)`. */
  lines: string[];
}

/**
 * The frontier block (C12): host-written and deterministic, no model call. Each section is a
 * `## title` line followed by its lines, in the order the host's providers are registered, so a
 * replay of the same rows writes the same bytes.
 */
export function composeFrontierBlock(sections: readonly FrontierSection[]): string {
  const parts = ["This transcript was folded: the records before this point are summarized by the host below; the records after it follow as they happened.\n"];
  for (const section of sections) {
    parts.push(`## ${section.title}\n`);
    if (section.lines.length === 0) parts.push("(none)\n");
    for (const line of section.lines) parts.push(line.endsWith("\n") ? line : `${line}\n`);
  }
  return parts.join("");
}
