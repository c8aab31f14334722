const QUOTE = 0x22;
const COLON = 0x3a;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

// The colon at `at` follows a quote (whitespace between allowed).
function afterQuote(text: string, at: number): boolean {
  let i = at - 1;
  while (i >= 0 && isSpace(text.charCodeAt(i))) i--;
  return text.charCodeAt(i) === QUOTE;
}

// The quote at `at` precedes a colon (whitespace between allowed).
function beforeColon(text: string, at: number): boolean {
  let i = at + 1;
  while (isSpace(text.charCodeAt(i))) i++;
  return text.charCodeAt(i) === COLON;
}

// Misses each walk may take before the sparser one is chosen.
const PROBE = 64;

/**
 * An upper bound of the keys in a JSON text, exact on usual texts: the (quote, colon) pairs with
 * only whitespace between. Every key is a string, optional whitespace, then its colon, so each
 * key makes one; a string makes one more only where a colon follows its opening quote or an escaped
 * quote (`":x"`, `"a\":"`).
 * Each pair is found by walking either the colons or the quotes of the text (one search call a
 * character): whichever is sparser in strings, since a cell's output is full of colons and a
 * quoted log full of escaped quotes. Both walks are probed, then the one that got further goes on
 * (a probe that walks the whole text has the answer).
 */
export function keyBound(text: string): number {
  // Quotes first: a text that reaches this walk holds escapes (compact ones are settled by their
  // length), usually long output full of colons and `\n`, whose few quotes are walked in one probe.
  let quoteAt = text.indexOf('"');
  let quoteKeys = 0;
  for (let misses = 0; quoteAt !== -1 && misses < PROBE; quoteAt = text.indexOf('"', quoteAt + 1)) {
    if (beforeColon(text, quoteAt)) quoteKeys++;
    else misses++;
  }
  if (quoteAt === -1) return quoteKeys;
  let colonAt = text.indexOf(":");
  let colonKeys = 0;
  for (let misses = 0; colonAt !== -1 && misses < PROBE; colonAt = text.indexOf(":", colonAt + 1)) {
    if (afterQuote(text, colonAt)) colonKeys++;
    else misses++;
  }
  if (colonAt === -1) return colonKeys;
  if (colonAt >= quoteAt) {
    for (; colonAt !== -1; colonAt = text.indexOf(":", colonAt + 1)) if (afterQuote(text, colonAt)) colonKeys++;
    return colonKeys;
  }
  for (; quoteAt !== -1; quoteAt = text.indexOf('"', quoteAt + 1)) if (beforeColon(text, quoteAt)) quoteKeys++;
  return quoteKeys;
}
