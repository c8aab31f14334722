import type { Worker } from "@klbr/supervisor";

/** One running hooks worker bound to one activated release. */
export interface HooksGeneration {
  readonly worker: Worker;
  readonly revision: string;
  readonly epoch: number;
  readonly path: string;
  readonly hooks: Record<string, string>;
  /** Executions that used this revision and have not ended; the worker lives until they do. */
  readonly pinnedBy: Set<string>;
  retired: boolean;
}
