/**
 * The first key that repeats inside one object of a JSON text, compared after unescaping, or
 * undefined. JSON.parse keeps the last duplicate silently; Python's loader refuses it, so the two
 * languages agree only if this side looks too. The text must already be valid JSON.
 */
export function findDuplicateKey(text: string): string | undefined {
  // Stryker disable next-line ArrayDeclaration: equivalent, on valid JSON nothing reads the stack below the outermost container
  const stack: (Set<string> | null)[] = [];
  // Stryker disable next-line BooleanLiteral: equivalent, expectKey is read only with a container on the stack, and opening one sets it
  let expectKey = false;
  let i = 0;
  // Stryker disable next-line EqualityOperator: equivalent, at i === text.length the character is undefined and matches no branch
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      const keys = stack[stack.length - 1];
      if (keys && expectKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (keys.has(key)) return key;
        keys.add(key);
        // Stryker disable next-line BooleanLiteral: equivalent, a key is always followed by ":", which clears expectKey too
        expectKey = false;
      }
      i = j + 1;
      continue;
    }
    if (c === "{") {
      stack.push(new Set());
      expectKey = true;
    } else if (c === "[") {
      stack.push(null);
    } else if (c === "}" || c === "]") {
      stack.pop();
      // Stryker disable next-line BooleanLiteral: equivalent, a closing bracket is followed by ",", another closing bracket or the end, each of which sets expectKey itself
      expectKey = false;
    } else if (c === ",") {
      // Stryker disable next-line ConditionalExpression: equivalent, inside an array the null keys set already stops a string from counting as a key
      expectKey = stack[stack.length - 1] != null;
    } else if (c === ":") {
      expectKey = false;
    }
    i += 1;
  }
  return undefined;
}

/** True when a string holds no lone UTF-16 surrogate, so it has a UTF-8 encoding. */
export function isWellFormedText(value: string): boolean {
  return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value);
}
