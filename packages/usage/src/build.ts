import { consistencyFlags, orderFlags } from "./flags.js";
import type { Family } from "./family.js";
import { USAGE_COUNT_FIELDS, type UsageCounts, type UsageFlag, type UsageRecord, type UsageShape } from "./record.js";

/** Assembles a record: counts in a fixed key order (absent ones left out), flags computed and ordered. */
export function buildRecord(
  shape: UsageShape | "unknown",
  family: Family | undefined,
  counts: UsageCounts,
  raw: unknown[],
  // Stryker disable next-line ArrayDeclaration: equivalent, orderFlags keeps only USAGE_FLAGS so an unknown default entry never reaches the record
  extraFlags: Iterable<UsageFlag> = [],
): UsageRecord {
  const record = { shape } as UsageRecord;
  for (const field of USAGE_COUNT_FIELDS) {
    const value = counts[field];
    if (value !== undefined) record[field] = value;
  }
  record.raw = raw;
  // Stryker disable next-line ArrayDeclaration: equivalent, orderFlags keeps only USAGE_FLAGS so an unknown entry never reaches the record
  const flags = family === undefined ? [] : consistencyFlags(counts, family);
  record.flags = orderFlags([...flags, ...extraFlags]);
  return record;
}
