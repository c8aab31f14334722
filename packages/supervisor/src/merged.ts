/**
 * `{ ...a, ...b }`: the same own enumerable properties (string keys, then symbols), in the same
 * order, on a plain object. Built by `Object.assign` on a fresh object: Node 20's V8 makes an
 * object literal that adds properties after a spread about a hundred times slower than that (some
 * 10-20 us for a completion record, which every cell built twice on its round trip). `Object.assign`
 * differs from a spread only for an own `__proto__` key (it would set the prototype), so such an
 * object takes the spread.
 */
export function merged<A extends object, B extends object>(a: A, b: B): A & B {
  if (Object.hasOwn(a, "__proto__") || Object.hasOwn(b, "__proto__")) return { ...a, ...b };
  return Object.assign({}, a, b);
}
