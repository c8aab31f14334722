import * as fs from "node:fs";
import * as path from "node:path";
import { ActivationError } from "./errors.js";
import { MAX_JSON_DEPTH, findDuplicateKey, jsonDepth } from "./json-keys.js";
import { MANIFEST_FILE } from "./limits.js";

/** The two decision slots a manifest must name, in the order they are checked. */
export const MANIFEST_SLOTS = ["attention.plan", "delivery.review"] as const;

/** One of the two decision slots. */
export type ManifestSlot = (typeof MANIFEST_SLOTS)[number];

/** A validated manifest (C5): version 1 and exactly the two slot entrypoints. */
export interface Manifest {
  /** Always 1. */
  version: 1;
  /** `module.path:attribute` for each slot. */
  hooks: Record<ManifestSlot, string>;
}

/** `module.path:attribute`, ASCII Python identifiers; the same pattern Python's klbr.manifest uses. */
export const ENTRYPOINT_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$/;

const TOP_FIELDS = new Set(["version", "hooks"]);
const SLOT_SET = new Set<string>(MANIFEST_SLOTS);

function fail(code: ConstructorParameters<typeof ActivationError>[0], field: string, message: string): never {
  throw new ActivationError(code, message, { field, path: MANIFEST_FILE });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// Code point order, which Python's sorted() on str also uses, so both name the same unknown field first.
function compareCodePoints(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let k = 0; k < Math.min(x.length, y.length); k++) if (x[k] !== y[k]) return x[k]! - y[k]!;
  return x.length - y.length;
}

function firstUnknown(value: Record<string, unknown>, known: Set<string>): string | undefined {
  return Object.keys(value)
    .filter((k) => !known.has(k))
    .sort(compareCodePoints)[0];
}

/** The top-level Python package both entrypoints live in (the name the release root is loaded as). */
export function manifestPackage(manifest: Manifest): string {
  return manifest.hooks["attention.plan"].split(":")[0]!.split(".")[0]!;
}

/** Validate an already parsed manifest value; errors name the field (`version`, `hooks.delivery.review`, ...). */
export function parseManifest(value: unknown): Manifest {
  if (!isPlainObject(value)) fail("MANIFEST_NOT_OBJECT", "$", "manifest must be a JSON object");
  const unknownTop = firstUnknown(value, TOP_FIELDS);
  if (unknownTop !== undefined) {
    fail("MANIFEST_UNKNOWN_FIELD", unknownTop, `manifest field ${JSON.stringify(unknownTop)} is not allowed (only "version" and "hooks")`);
  }
  if (!("version" in value)) fail("MANIFEST_MISSING_FIELD", "version", `manifest field "version" is missing`);
  if (value.version !== 1) {
    fail("MANIFEST_BAD_VERSION", "version", `manifest field "version" must be 1, got ${JSON.stringify(value.version)}`);
  }
  if (!("hooks" in value)) fail("MANIFEST_MISSING_FIELD", "hooks", `manifest field "hooks" is missing`);
  const hooks = value.hooks;
  if (!isPlainObject(hooks)) fail("MANIFEST_NOT_OBJECT", "hooks", `manifest field "hooks" must be a JSON object`);
  const unknownSlot = firstUnknown(hooks, SLOT_SET);
  if (unknownSlot !== undefined) {
    fail("MANIFEST_UNKNOWN_FIELD", `hooks.${unknownSlot}`, `manifest field ${JSON.stringify(`hooks.${unknownSlot}`)} is not a decision slot (only ${MANIFEST_SLOTS.join(", ")})`);
  }
  for (const slot of MANIFEST_SLOTS) {
    if (!(slot in hooks)) fail("MANIFEST_MISSING_SLOT", `hooks.${slot}`, `manifest field "hooks.${slot}" is missing`);
  }
  for (const slot of MANIFEST_SLOTS) {
    const entry = hooks[slot];
    if (typeof entry !== "string" || !ENTRYPOINT_PATTERN.test(entry)) {
      fail("MANIFEST_BAD_ENTRYPOINT", `hooks.${slot}`, `manifest field "hooks.${slot}" must be "module.path:attribute", got ${JSON.stringify(entry)}`);
    }
  }
  const manifest: Manifest = {
    version: 1,
    hooks: { "attention.plan": hooks["attention.plan"] as string, "delivery.review": hooks["delivery.review"] as string },
  };
  const pkg = manifestPackage(manifest);
  const other = manifest.hooks["delivery.review"].split(":")[0]!.split(".")[0]!;
  if (other !== pkg) {
    fail("MANIFEST_PACKAGE_MISMATCH", "hooks.delivery.review", `manifest entrypoints must share one top-level package: ${JSON.stringify(pkg)} and ${JSON.stringify(other)}`);
  }
  return manifest;
}

const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Decode and validate manifest.json bytes: strict UTF-8, JSON without duplicate keys, then parseManifest. */
export function decodeManifest(bytes: Uint8Array): Manifest {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch (error) {
    throw new ActivationError("MANIFEST_INVALID_JSON", `${MANIFEST_FILE} is not valid UTF-8`, { field: "$", path: MANIFEST_FILE, cause: error });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ActivationError("MANIFEST_INVALID_JSON", `${MANIFEST_FILE} is not valid JSON: ${(error as Error).message}`, { field: "$", path: MANIFEST_FILE, cause: error });
  }
  const depth = jsonDepth(text);
  if (depth > MAX_JSON_DEPTH) {
    throw new ActivationError("MANIFEST_INVALID_JSON", `${MANIFEST_FILE} nests ${depth} levels deep; at most ${MAX_JSON_DEPTH}`, { field: "$", path: MANIFEST_FILE });
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate !== null) {
    throw new ActivationError("MANIFEST_INVALID_JSON", `${MANIFEST_FILE} repeats the key ${JSON.stringify(duplicate)}`, { field: "$", path: MANIFEST_FILE });
  }
  return parseManifest(value);
}

/** Read and validate `<root>/manifest.json` (not following a symlink; a FIFO or a folder is SOURCE_NOT_REGULAR, never waited on). */
export function readManifest(root: string): Manifest {
  const file = path.join(root, MANIFEST_FILE);
  let bytes: Buffer;
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it like scanSource does.
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    try {
      if (!fs.fstatSync(fd).isFile()) {
        throw new ActivationError("SOURCE_NOT_REGULAR", `${JSON.stringify(file)} is not a regular file`, { path: MANIFEST_FILE });
      }
      bytes = fs.readFileSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch (error) {
    if (error instanceof ActivationError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") {
      throw new ActivationError("MANIFEST_MISSING", `${JSON.stringify(file)} does not exist`, { field: "$", path: MANIFEST_FILE, cause: error });
    }
    if (code === "ELOOP") {
      throw new ActivationError("SOURCE_SYMLINK", `${JSON.stringify(file)} is a symbolic link`, { path: MANIFEST_FILE, cause: error });
    }
    throw error;
  }
  return decodeManifest(bytes);
}
