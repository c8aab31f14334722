import type { kernelResets } from "../../db/schema";
import type { KernelResetRow } from "../kernel";

/** Kernel records (store/kernel.ts). */
export interface KernelStore {
  /** Record kernel.reset: a new workbench generation and the skill set revision its hello echoed. */
  recordKernelReset(row: typeof kernelResets.$inferInsert): Promise<KernelResetRow>;
  /** How many generations a session has had; the next one is numbered after them. */
  lastKernelReset(sessionId: string): Promise<KernelResetRow | undefined>;
}
