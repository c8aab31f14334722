// C20 rich display: what one `display` message may hold. The MIME bundle's rules need a key's own
// path in the error (`message.data.image/png`), so they are checked by one action per object that
// walks its keys in JavaScript property order (Python walks the same order) and reports the first
// fault with the rule's code, as every other rule of this package does.
import * as v from "valibot";
import { BINARY_DISPLAY_MIMES, DISPLAY_OMITTED_KEY, MAX_DISPLAYS_PER_CELL, MAX_MIME_TYPE_LENGTH } from "./limits.js";
import { identifier, integer, isPlainObject, rule } from "./rules.js";

// RFC 6838 restricted names, lowercase only (a bundle's keys are compared as strings, so one spelling).
const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;

/** True for a MIME type a display bundle may use as a key: lowercase `type/subtype`, at most 255 characters. */
export function isMimeType(value: unknown): value is string {
  return typeof value === "string" && value.length <= MAX_MIME_TYPE_LENGTH && MIME.test(value);
}

const BASE64 = /^[A-Za-z0-9+/]*$/;
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const SIGNATURES: Record<string, readonly number[]> = {
  "image/png": [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
  "image/jpeg": [0xff, 0xd8, 0xff],
};

/**
 * True when `text` is canonical base64 (RFC 4648 section 4: padded, no line breaks, zero pad
 * bits, so one byte string has exactly one spelling) of bytes starting with `mime`'s signature.
 */
export function isEncodedImage(mime: string, text: string): boolean {
  const signature = SIGNATURES[mime];
  if (signature === undefined || text.length === 0 || text.length % 4 !== 0) return false;
  const pad = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  const body = pad === 0 ? text : text.slice(0, -pad);
  if (!BASE64.test(body)) return false;
  // The last character's bits past the data must be zero (4 of them before "==", 2 before "=").
  if (pad > 0 && ALPHABET.indexOf(body[body.length - 1]!) % (pad === 2 ? 16 : 4) !== 0) return false;
  const head = decodeHead(body, signature.length);
  return head.length === signature.length && signature.every((byte, index) => head[index] === byte);
}

/** The first `count` bytes of unpadded base64 `body` (fewer when it holds fewer). */
function decodeHead(body: string, count: number): number[] {
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (let index = 0; index < body.length && bytes.length < count; index++) {
    value = (value << 6) | ALPHABET.indexOf(body[index]!);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((value >> bits) & 0xff);
    }
  }
  return bytes;
}

const mimeKey = rule("ENVELOPE_DISPLAY_MIME", "a MIME type: lowercase type/subtype of at most 255 characters, not klbr/*", (key: string) => isMimeType(key) && !key.startsWith("klbr/"));
const metadataKey = rule(
  "ENVELOPE_DISPLAY_MIME",
  `a MIME type: lowercase type/subtype of at most 255 characters (of klbr/*, only ${DISPLAY_OMITTED_KEY})`,
  (key: string) => isMimeType(key) && (!key.startsWith("klbr/") || key === DISPLAY_OMITTED_KEY),
);
const stringValue = rule("ENVELOPE_INVALID_FIELD", "a string", (value: unknown) => typeof value === "string");
const encoded = rule("ENVELOPE_DISPLAY_ENCODING", "canonical base64 of bytes in that image format", (entry: [string, string]) => isEncodedImage(...entry));
const hasPlainText = rule("ENVELOPE_MISSING_FIELD", "a text/plain representation", (data: Record<string, unknown>) => "text/plain" in data);
const objectEntry = rule("ENVELOPE_NOT_OBJECT", "an object", isPlainObject);
const nonEmpty = rule("ENVELOPE_INVALID_FIELD", "at least one omitted MIME type", (value: Record<string, unknown>) => Object.keys(value).length > 0);
const omittedBytes = rule("ENVELOPE_INVALID_FIELD", "an integer >= 1 (the bytes omitted)", (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 1);
const omittedAbsent = rule(
  "ENVELOPE_INVALID_FIELD",
  "a MIME type absent from data (only text/plain, cut to fit, may be in both)",
  (mime: string) => mime === "text/plain",
);

type Fault = { requirement: (value: never) => boolean; keys: string[]; value: unknown };

/** A validation action reporting the first fault `find` returns, under its own path and rule. */
function keyedCheck<T extends Record<string, unknown>>(find: (value: T) => Fault | undefined): v.GenericValidation<T> {
  return {
    kind: "validation",
    type: "check",
    reference: keyedCheck,
    async: false,
    expects: null,
    "~run"(dataset: v.SuccessDataset<T>, config: v.Config<v.BaseIssue<unknown>>) {
      const fault = find(dataset.value);
      if (fault === undefined) return dataset;
      let input: unknown = dataset.value;
      // The error names the fault's own value: the key itself when the key is the fault.
      const path = fault.keys.map((key, index) => {
        const value = (input as Record<string, unknown>)[key];
        const item = { type: "object", origin: "value", input, key, value: index === fault.keys.length - 1 ? fault.value : value } as const;
        input = value;
        return item;
      });
      const issue = {
        kind: "validation",
        type: "check",
        input: fault.value,
        expected: null,
        received: "",
        message: "C20 display bundle",
        requirement: fault.requirement,
        path: path.length > 0 ? path : undefined,
        lang: config.lang,
        abortEarly: config.abortEarly,
        abortPipeEarly: config.abortPipeEarly,
      };
      return { typed: false, value: dataset.value, issues: [issue] } as never;
    },
  } as unknown as v.GenericValidation<T>;
}

/** The first fault of a `data` object, checked in JavaScript key order after text/plain's presence. */
function dataFault(data: Record<string, unknown>): Fault | undefined {
  if (!("text/plain" in data)) return { requirement: hasPlainText, keys: ["text/plain"], value: undefined };
  for (const key of Object.keys(data)) {
    const value = data[key];
    if (!mimeKey(key)) return { requirement: mimeKey, keys: [key], value: key };
    if (typeof value !== "string") return { requirement: stringValue, keys: [key], value };
    if (BINARY_DISPLAY_MIMES.includes(key as never) && !isEncodedImage(key, value)) return { requirement: encoded, keys: [key], value };
  }
  return undefined;
}

/** The first fault of a `metadata` object: its keys, that each value is an object, `klbr/omitted`'s entries. */
function metadataFault(metadata: Record<string, unknown>): Fault | undefined {
  for (const key of Object.keys(metadata)) {
    const value = metadata[key];
    if (!metadataKey(key)) return { requirement: metadataKey, keys: [key], value: key };
    if (!isPlainObject(value)) return { requirement: objectEntry, keys: [key], value };
    if (key !== DISPLAY_OMITTED_KEY) continue;
    if (!nonEmpty(value)) return { requirement: nonEmpty, keys: [key], value };
    for (const mime of Object.keys(value)) {
      if (!mimeKey(mime)) return { requirement: mimeKey, keys: [key, mime], value: mime };
      if (!omittedBytes(value[mime])) return { requirement: omittedBytes, keys: [key, mime], value: value[mime] };
    }
  }
  return undefined;
}

/** The bundle's one rule across fields: an omitted MIME type is not also sent (text/plain excepted). */
function omittedFault(message: { data: Record<string, string>; metadata: Record<string, Record<string, unknown>> }): Fault | undefined {
  const omitted = message.metadata[DISPLAY_OMITTED_KEY];
  if (omitted === undefined) return undefined;
  for (const mime of Object.keys(omitted)) {
    if (mime in message.data && !omittedAbsent(mime)) return { requirement: omittedAbsent, keys: ["metadata", DISPLAY_OMITTED_KEY, mime], value: mime };
  }
  return undefined;
}

const displayData = v.pipe(
  v.unknown(),
  v.guard(rule("ENVELOPE_NOT_OBJECT", "an object", isPlainObject)),
  keyedCheck(dataFault),
) as unknown as v.GenericSchema<unknown, Record<string, string>>;

const displayMetadata = v.pipe(
  v.unknown(),
  v.guard(rule("ENVELOPE_NOT_OBJECT", "an object", isPlainObject)),
  keyedCheck(metadataFault),
) as unknown as v.GenericSchema<unknown, Record<string, Record<string, unknown>>>;

const displayFields = v.strictObject({
  kind: v.literal("display"),
  id: identifier,
  seq: v.pipe(
    integer(0),
    v.check<number>(rule("ENVELOPE_LIMIT_EXCEEDED", `at most ${MAX_DISPLAYS_PER_CELL} displays per cell (seq < ${MAX_DISPLAYS_PER_CELL})`, (n: number) => n < MAX_DISPLAYS_PER_CELL)),
  ),
  data: displayData,
  metadata: displayMetadata,
});

/**
 * `display` (C20, negotiated): one MIME bundle the running `execute` showed. Which operation, in
 * what order, how many and never after `completed` are rules across messages: {@link DisplaySequence}.
 */
export const DisplayMessageSchema = v.pipe(displayFields, keyedCheck(omittedFault as never));
