// JSON.parse keeps the last of two equal keys without a word; a manifest that says one thing to a
// reader and another to the loader is refused instead. Python's decoder refuses the same keys.

/** Manifests nest no deeper than this many arrays/objects (C1's wire limit); Python refuses the same. */
export const MAX_JSON_DEPTH = 128;

/** The deepest nesting of arrays/objects in `text` (already valid JSON), counted without recursion. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") max = Math.max(max, ++depth);
    else if (c === "}" || c === "]") depth--;
  }
  return max;
}

/** The first object key that appears twice in one object of `text` (already valid JSON), or null. */
export function findDuplicateKey(text: string): string | null {
  let i = 0;
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++;
  };
  const str = (): string => {
    const start = i;
    i++; // opening quote
    while (text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (): string | null => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      const seen = new Set<string>();
      ws();
      if (text[i] === "}") {
        i++;
        return null;
      }
      for (;;) {
        ws();
        const key = str();
        if (seen.has(key)) return key;
        seen.add(key);
        ws();
        i++; // colon
        const inner = value();
        if (inner !== null) return inner;
        ws();
        if (text[i++] === "}") return null;
      }
    }
    if (c === "[") {
      i++;
      ws();
      if (text[i] === "]") {
        i++;
        return null;
      }
      for (;;) {
        const inner = value();
        if (inner !== null) return inner;
        ws();
        if (text[i++] === "]") return null;
      }
    }
    if (c === '"') {
      str();
      return null;
    }
    while (i < text.length && !",]} \t\n\r".includes(text[i]!)) i++;
    return null;
  };
  return value();
}
