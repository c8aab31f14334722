import { encodeFrame } from "../../src/index";

/** A small seeded PRNG (mulberry32), so every run tests the same corpus. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const utf8 = new TextEncoder();

/** A 4-byte BE header followed by the payload. */
export function frameOf(payload: Uint8Array | string): Uint8Array {
  const body = typeof payload === "string" ? utf8.encode(payload) : payload;
  const out = new Uint8Array(4 + body.length);
  new DataView(out.buffer).setUint32(0, body.length, false);
  out.set(body, 4);
  return out;
}

const STRINGS = ["", "a", "é", "✓", "😀", "\u2028", "\u0000", '"', "\\", "\n", "key", "__proto__", "1", "\ufeff", "[{"];
const NUMBERS = [0, 1, -1, 0.5, -2.25, 1e-7, 1e21, 2.5e300, 1.7976931348623157e308, 5e-324, 9007199254740991, -9007199254740991, 123456];

/** A random value the encoders accept (depth <= maxDepth). */
export function randomValue(next: () => number, maxDepth = 6): unknown {
  const pick = <T>(xs: T[]): T => xs[Math.floor(next() * xs.length)]!;
  const r = next();
  if (maxDepth <= 0 || r < 0.45) {
    const s = next();
    if (s < 0.35) return pick(STRINGS) + (next() < 0.3 ? pick(STRINGS) : "");
    if (s < 0.7) return next() < 0.5 ? pick(NUMBERS) : Math.round((next() - 0.5) * 1e6) / (next() < 0.5 ? 1 : 1000);
    return pick([true, false, null]);
  }
  const n = Math.floor(next() * 4);
  if (r < 0.7) return Array.from({ length: n }, () => randomValue(next, maxDepth - 1));
  const out: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) {
    // defineProperty, not assignment: assigning "__proto__" would set the prototype.
    const value = randomValue(next, maxDepth - 1);
    Object.defineProperty(out, pick(STRINGS) + pick(["", "x", "2"]), { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

// Tokens that break (or nearly break) one C1 rule each, for token-soup payloads.
const TOKENS = [
  "{", "}", "[", "]", ",", ":", " ", "\n", '"a"', '"b"', '"\\u0061"', '"\\ud800"', '"\\udc00"', '"\\ud83d\\ude00"', '"😀"',
  '"\\\\"', '"\\"', "1e400", "-1e400", "1e308", "9007199254740991", "9007199254740992", "-9007199254740993",
  "12345678901234567890", "1.5", "-0", "0", "01", "NaN", "Infinity", "true", "false", "null", "tru", "\ufeff", '"x',
  "[[[[[[[[[[", "]]]]]]]]]]", "1.", ".5", "\u00a0", '"\\x"', "/",
];

/** A payload of random tokens: valid JSON now and then, every rule broken now and then. */
export function tokenSoup(next: () => number): string {
  const n = 1 + Math.floor(next() * 12);
  let out = "";
  for (let i = 0; i < n; i++) out += TOKENS[Math.floor(next() * TOKENS.length)]!;
  return out;
}

/** An object text with a repeated key somewhere, possibly escaped differently. */
export function duplicateKeyText(next: () => number): string {
  const spellings = [['"k"', '"\\u006b"'], ['"k"', '"k"'], ['"😀"', '"\\ud83d\\ude00"'], ['"a/b"', '"a\\/b"']][Math.floor(next() * 4)]!;
  const inner = `{${spellings[0]}:1,"z":[],${spellings[1]}:2}`;
  const depth = Math.floor(next() * 4);
  return "[".repeat(depth) + inner + "]".repeat(depth);
}

/** Deep nesting around 128, with or without brackets hidden in strings. */
export function depthText(next: () => number): string {
  const depth = 126 + Math.floor(next() * 5);
  const open = next() < 0.5 ? "[" : '{"k":';
  const close = open === "[" ? "]" : "}";
  const hidden = next() < 0.3 ? '"[[[\\"[["' : "0";
  return open.repeat(depth) + hidden + close.repeat(depth);
}

const LEAVES = [
  '"\\ud800"', '"a\\udc00b"', '"\\ud83d\\ude00"', '"\\ud83d\\ud83d\\ude00"', '"\\\\ud800"', '"\\\\\\ud800"', '"\\uDBFF\\uDFFF"',
  "1e400", "-2e308", "1e308", "9007199254740992", "-9007199254740991", "99999999999999999", "0.1e-999", "NaN",
];

/** Valid JSON text with one or two leaves swapped for a token near a C1 rule (or over it). */
export function spliceText(next: () => number): string {
  let text = JSON.stringify(randomValue(next, 4));
  for (let k = 0; k < 1 + Math.floor(next() * 2); k++) {
    const leaf = LEAVES[Math.floor(next() * LEAVES.length)]!;
    const spots = [...text.matchAll(/(?<=[\[:,])(?:-?\d[\d.e+-]*|true|false|null)/g)];
    const spot = spots[Math.floor(next() * spots.length)];
    text = spot ? text.slice(0, spot.index) + leaf + text.slice(spot.index + spot[0].length) : `[${leaf}]`;
  }
  return text;
}

/** Returns bytes with one random mutation: bit flip, byte insert/delete/overwrite, cut, splice or header edit. */
export function mutate(bytes: Uint8Array, next: () => number): Uint8Array {
  const at = Math.floor(next() * Math.max(bytes.length, 1));
  const copy = Array.from(bytes);
  const interesting = [0x00, 0x22, 0x5c, 0x5b, 0x5d, 0x7b, 0x7d, 0x3a, 0x2c, 0x80, 0xbf, 0xc0, 0xed, 0xef, 0xf4, 0xff, 0x75, 0x64, 0x65];
  const byte = next() < 0.6 ? interesting[Math.floor(next() * interesting.length)]! : Math.floor(next() * 256);
  switch (Math.floor(next() * 7)) {
    case 0:
      copy[at] = (copy[at] ?? 0) ^ (1 << Math.floor(next() * 8));
      break;
    case 1:
      copy.splice(at, 0, byte);
      break;
    case 2:
      copy.splice(at, 1);
      break;
    case 3:
      copy[at] = byte;
      break;
    case 4:
      copy.length = at;
      break;
    case 5: {
      const from = Math.floor(next() * copy.length);
      copy.splice(at, 0, ...copy.slice(from, from + 1 + Math.floor(next() * 8)));
      break;
    }
    default:
      copy[Math.floor(next() * 4)] = byte;
  }
  return Uint8Array.from(copy);
}

/** Fixes the header of a one-frame stream to the real payload length (so the payload rules are reached). */
export function refitHeader(bytes: Uint8Array): Uint8Array {
  return bytes.length < 4 ? bytes : frameOf(bytes.subarray(4));
}

/** The seeded differential corpus: streams of one or more frames, many of them broken. */
export function differentialCorpus(seed: number, count: number): Uint8Array[] {
  const next = rng(seed);
  const out: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const kind = next();
    let stream: Uint8Array;
    if (kind < 0.2) stream = encodeFrame(randomValue(next));
    else if (kind < 0.3) stream = frameOf(spliceText(next));
    else if (kind < 0.55) stream = frameOf(tokenSoup(next));
    else if (kind < 0.65) stream = frameOf(duplicateKeyText(next));
    else if (kind < 0.7) stream = frameOf(depthText(next));
    else {
      const base = next() < 0.5 ? encodeFrame(randomValue(next)) : frameOf(tokenSoup(next));
      const mutated = mutate(base, next);
      stream = next() < 0.7 ? refitHeader(mutated) : mutated;
    }
    if (next() < 0.1) {
      // A good frame before or after: what is yielded before an error must agree too.
      const extra = encodeFrame(randomValue(next, 2));
      stream = next() < 0.5 ? Uint8Array.from([...extra, ...stream]) : Uint8Array.from([...stream, ...extra]);
    }
    out.push(stream);
  }
  return out;
}
