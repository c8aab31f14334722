/** Room left in one frame (1,048,576 bytes) for a reply value once the envelope around it is counted. */
export const REPLY_BUDGET_BYTES = 1_000_000;

/** `sessionId` -> `session_id`: rows read through drizzle are camelCase; the wire is snake_case. */
export function snakeKeys(row: unknown): unknown {
  if (row === null || typeof row !== "object" || Array.isArray(row)) return row;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) out[key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = value;
  return out;
}

interface Leaf {
  holder: Record<string, unknown> | unknown[];
  key: string | number;
  text: string;
  part: number;
}

function collect(value: unknown, part: number, out: Leaf[]): void {
  if (Array.isArray(value)) {
    value.forEach((item, i) => (typeof item === "string" ? out.push({ holder: value, key: i, text: item, part }) : collect(item, part, out)));
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (typeof item === "string") out.push({ holder: value as Record<string, unknown>, key, text: item, part });
      else collect(item, part, out);
    }
  }
}

/**
 * Cut the longest strings of `parts` (deep, in place) until `encode()` fits `budget` bytes, as
 * workspace.run cuts its output: on a character boundary, each cut counted in UTF-8 bytes per
 * part. Removing n characters shrinks the encoding by at least n bytes, so cutting the overflow
 * from the longest string converges in a few rounds. Returns the bytes cut from each part.
 */
export function cutToFit(parts: unknown[], encode: () => string, budget: number = REPLY_BUDGET_BYTES): number[] {
  const cut = parts.map(() => 0);
  let size = Buffer.byteLength(encode());
  while (size > budget) {
    const leaves: Leaf[] = [];
    parts.forEach((part, i) => collect(part, i, leaves));
    let longest: Leaf | undefined;
    for (const leaf of leaves) if (!longest || leaf.text.length > longest.text.length) longest = leaf;
    if (!longest || longest.text.length === 0) break; // nothing left to cut; the caller's limits keep this unreachable
    let kept = longest.text.slice(0, Math.max(0, longest.text.length - (size - budget)));
    // Never leave a lone high surrogate: the encoder refuses it.
    if (/[\uD800-\uDBFF]$/.test(kept)) kept = kept.slice(0, -1);
    (longest.holder as Record<string | number, unknown>)[longest.key] = kept;
    cut[longest.part]! += Buffer.byteLength(longest.text) - Buffer.byteLength(kept);
    size = Buffer.byteLength(encode());
  }
  return cut;
}
