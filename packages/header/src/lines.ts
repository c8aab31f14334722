/**
 * Split a text into lines that keep their endings: a line ends after "\n" (so "\r\n" stays whole),
 * and a last line without a newline is kept as it is. A lone "\r" is ordinary text, not a break.
 * joinLines(splitLines(t)) === t for every t; the empty text has no lines.
 */
export function splitLines(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (;;) {
    const end = text.indexOf("\n", start);
    if (end === -1) break;
    lines.push(text.slice(start, end + 1));
    start = end + 1;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

/** Join lines back into a text: plain concatenation, since every line carries its own ending. */
export function joinLines(lines: readonly string[]): string {
  return lines.join("");
}
