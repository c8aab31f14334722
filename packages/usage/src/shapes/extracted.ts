import type { UsageCounts, UsageFlag } from "../record.js";

/** What one raw usage object says: its counts and any flag only the raw fields can show. */
export interface Extracted {
  counts: UsageCounts;
  flags: UsageFlag[];
}

/** Sets a count only when the route sent it, so an unsent count stays an absent property. */
export function put(counts: UsageCounts, field: keyof UsageCounts, value: number | undefined): void {
  if (value !== undefined) counts[field] = value;
}
