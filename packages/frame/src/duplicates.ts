/**
 * Number of own keys over every object in a parsed value. JSON.parse keeps the last of
 * duplicate keys, so fewer keys here than in the source text means a duplicate.
 */
export function countParsedKeys(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  let count = 0;
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) count += countParsedKeys(item);
    return count;
  }
  for (const item of Object.values(value)) count += 1 + countParsedKeys(item);
  return count;
}

/**
 * The first key (in source order, compared after unescaping) that repeats within one object
 * of valid JSON text, or undefined. Slow path: only runs once a duplicate is known to exist.
 */
export function findDuplicateKey(text: string): string | undefined {
  // Stryker disable next-line ArrayDeclaration: the text is valid JSON, so no key appears outside a container and the bottom entry is never read
  const stack: (Set<string> | null)[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let j = i + 1;
      while (text.charCodeAt(j) !== 0x22) j += text.charCodeAt(j) === 0x5c ? 2 : 1;
      let k = j + 1;
      while (k < n && " \t\r\n".includes(text[k]!)) k++;
      const keys = stack[stack.length - 1];
      if (text.charCodeAt(k) === 0x3a && keys) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (keys.has(key)) return key;
        keys.add(key);
      }
      i = j + 1;
      continue;
    }
    if (c === 0x7b) stack.push(new Set());
    else if (c === 0x5b) stack.push(null);
    else if (c === 0x7d || c === 0x5d) stack.pop();
    i++;
  }
  return undefined;
}
