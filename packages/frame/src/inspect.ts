import { Buffer } from "node:buffer";
import { MAX_DEPTH, MAX_SAFE_INTEGER } from "./constants";
import { literalLengthBound } from "./spelling";

/** What one walk over a parsed value found. */
export interface Inspection {
  /** Own keys over every object. */
  keys: number;
  /**
   * False when a number is beyond ±(2^53 - 1) or non-finite, a string or key holds a lone
   * surrogate (only a \u escape can put one there: the text was decoded fatally), or
   * nesting passes MAX_DEPTH.
   */
  clean: boolean;
  /**
   * The fewest characters any JSON text of this value can have: no whitespace, no escapes,
   * every number at literalLengthBound, each key once. A text that
   * parsed to the value is never shorter; one exactly this long has no duplicate key (a dropped
   * entry is at least `"":0,`), no escape (so no lone surrogate: only `\u` makes one) and no
   * whitespace. Meaningless when `clean` is false.
   */
  spelled: number;
}

/**
 * Walks a value JSON.parse returned: counts keys and the characters of its shortest text, and
 * flags anything the source text must settle (a huge number may be a legal float literal or an unsafe integer literal; depth is
 * only walked to MAX_DEPTH + 1, since JSON.parse itself is not recursive). Strings are only
 * checked for lone surrogates when `checkStrings` is set: the caller skips that when the text
 * holds no `\u` at all.
 */
export function inspectParsed(value: unknown, checkStrings = true): Inspection {
  // Module state instead of a per-call object: the walk is synchronous and runs no user code.
  keyCount = 0;
  spelled = 0;
  clean = true;
  strings = checkStrings;
  if (prototypeIsPolluted()) visitOwn(value, 0);
  else if (scalar(value)) visit(value as object, 0);
  return { keys: keyCount, clean, spelled };
}

let keyCount = 0;
let spelled = 0;
// Stryker disable next-line BooleanLiteral: every inspectParsed call sets it before any walk reads it
let clean = true;
// Stryker disable next-line BooleanLiteral: every inspectParsed call sets it before any walk reads it
let strings = true;

const EMPTY = {};

// for-in is the fast way over JSON.parse objects, but it also yields enumerable properties
// someone added to Object.prototype; then the walk takes own keys only.
function prototypeIsPolluted(): boolean {
  for (const _ in EMPTY) return true;
  // Stryker disable next-line BooleanLiteral: visitOwn walks exactly as visit does when nothing is inherited (only slower)
  return false;
}

function isWellFormed(text: string): boolean {
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed();
}

// Checks and spells a scalar; true when the value is a container to descend into.
function scalar(value: unknown): boolean {
  if (typeof value === "string") {
    spelled += value.length + 2;
    if (strings && !isWellFormed(value)) clean = false;
  } else if (typeof value === "number") {
    if (!(value <= MAX_SAFE_INTEGER && value >= -MAX_SAFE_INTEGER)) clean = false;
    else spelled += literalLengthBound(value);
  } else if (typeof value === "object") {
    if (value !== null) return true;
    spelled += 4;
  } else {
    spelled += value === true ? 4 : 5;
  }
  return false;
}

// Brackets and commas of a container of n items.
function punctuation(n: number): number {
  return n === 0 ? 2 : n + 1;
}

// The hot walk: scalars are checked inline so only containers cost a call.
function visit(value: object, depth: number): void {
  if (depth >= MAX_DEPTH) {
    clean = false;
    return;
  }
  if (Array.isArray(value)) {
    spelled += punctuation(value.length);
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (scalar(item)) visit(item as object, depth + 1);
    }
    return;
  }
  const record = value as Record<string, unknown>;
  let keys = 0;
  for (const key in record) {
    keys++;
    spelled += key.length + 3;
    if (strings && !isWellFormed(key)) clean = false;
    const item = record[key];
    if (scalar(item)) visit(item as object, depth + 1);
  }
  keyCount += keys;
  spelled += punctuation(keys);
}

function visitOwn(value: unknown, depth: number): void {
  if (!scalar(value)) return;
  if (depth >= MAX_DEPTH) {
    clean = false;
    return;
  }
  if (Array.isArray(value)) {
    spelled += punctuation(value.length);
    for (const item of value as unknown[]) visitOwn(item, depth + 1);
    return;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  keyCount += keys.length;
  spelled += punctuation(keys.length);
  for (const key of keys) {
    spelled += key.length + 3;
    if (strings && !isWellFormed(key)) clean = false;
    visitOwn(record[key], depth + 1);
  }
}

function countColons(text: string | Buffer): number {
  let count = 0;
  if (typeof text === "string") {
    for (let at = text.indexOf(":"); at !== -1; at = text.indexOf(":", at + 1)) count++;
  } else {
    // A number, not ":": Buffer#indexOf converts a string needle on every call.
    for (let at = text.indexOf(0x3a); at !== -1; at = text.indexOf(0x3a, at + 1)) count++;
  }
  return count;
}

function colonsInStrings(value: unknown): number {
  if (typeof value === "string") return countColons(value);
  if (typeof value !== "object" || value === null) return 0;
  let count = 0;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) count += colonsInStrings(value[i]);
    return count;
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) count += countColons(key) + colonsInStrings(record[key]);
  return count;
}

/**
 * True when the parsed keys account for every key in the text, so no key was a duplicate.
 * Every structural `:` introduces one key. Raw colons inside strings are subtracted by
 * counting them in the parsed strings, which is exact when no `\u003a` escape spells one;
 * a dropped duplicate always leaves the count short, so this never accepts a duplicate.
 * `mayHoldEscapes` false says the caller already knows the text holds no `\u` at all. The text
 * may be given as its UTF-8 bytes (a colon is one byte), which searches faster when long.
 */
export function keysAccountedFor(text: string | Buffer, value: unknown, keys: number, mayHoldEscapes = true): boolean {
  const colons = countColons(text);
  if (colons === keys) return true;
  // \u003a / \u003A is the only other spelling of a colon inside a string.
  if (mayHoldEscapes && text.includes("\\u003")) return false;
  return colons - colonsInStrings(value) === keys;
}
