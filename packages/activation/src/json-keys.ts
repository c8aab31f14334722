// JSON.parse keeps the last of two equal keys without a word; a manifest that says one thing to a
// reader and another to the loader is refused instead. Python's decoder refuses the same keys.

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
