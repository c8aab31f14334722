// @klbr/header: the instruction header a transcript pins, its observed revisions, verified
// line patches between instruction texts, and the observation text the model reads.

// Records
export type {
  Actor,
  Change,
  DiffChange,
  FullChange,
  HeaderPin,
  HeaderRecord,
  HeaderRevision,
  HostActor,
  Patch,
  PinReason,
  RecordedSource,
  SessionActor,
  SourceInput,
} from "./types.js";
export { checkActor, checkTime, parseHeaderPin, parseHeaderRecord, parseHeaderRevision } from "./records.js";

// Digests, lines and sources
export { isDigest, sha256Hex } from "./digest.js";
export { joinLines, splitLines } from "./lines.js";
export { checkSources, JOINED_SOURCE, joinSources, recordSources, sourcesLineUp } from "./sources.js";

// Verified changes
export { applyPatches, checkPatch, diffPatches } from "./patch.js";
export { applyChange, patchesPerSource, revise, verifiedChange } from "./change.js";
export type { AppliedChange, ChangeBase, ChangeTarget } from "./change.js";

// The chain and its three rules
export { resolve } from "./chain.js";
export type { Resolution, ResolveStop } from "./chain.js";
export { currentTextSupported, fold, observe, pinAtStart } from "./rules.js";

// What the model reads
export { describeActor, formatStamp, NO_NEWLINE_MARKER, OBSERVATION_NOTICE, renderObservation, renderPatches } from "./render.js";

// Errors
export { HEADER_ERROR_CODES, HeaderError, isHeaderError } from "./errors.js";
export type { HeaderErrorCode } from "./errors.js";
