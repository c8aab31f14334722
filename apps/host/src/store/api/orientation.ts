import type { orientationAdoptions, orientationCandidates } from "../../db/schema";
import type { Scope, CandidateRow, AdoptionRow, CurrentSource } from "../orientation";

/** Orientation records (store/orientation.ts). */
export interface OrientationStore {
  /** One candidate by id. */
  getCandidate(id: string): Promise<CandidateRow | undefined>;
  /** Insert a staged candidate. */
  insertCandidate(row: Omit<typeof orientationCandidates.$inferInsert, "status">): Promise<CandidateRow>;
  /** Mark a candidate adopted (it stays so once it has been an instruction source). */
  markAdopted(id: string): Promise<void>;
  /** The adoption an operation id already made, if any. */
  findAdoption(operationId: string): Promise<AdoptionRow | undefined>;
  /** Insert an adoption. */
  insertAdoption(row: typeof orientationAdoptions.$inferInsert): Promise<AdoptionRow>;
  /** Set the reply an adoption was answered with. */
  setAdoptionReply(id: number, reply: unknown): Promise<void>;
  /**
   * The instruction sources adopted for exactly `scope`: per target the newest adoption (a later
   * one replaces an earlier one), sorted by target.
   */
  currentSources(scope: Scope): Promise<CurrentSource[]>;
  /** Candidates staged (not yet adopted) for a session's scope: global ones and its own, oldest first. */
  stagedCandidates(sessionId: string): Promise<CandidateRow[]>;
  /** Every scope that has an adoption, global first. */
  adoptedScopes(): Promise<Scope[]>;
}
