import type { orientationAdoptions, orientationCandidates } from "../../db/schema";
import type { Scope, CandidateRow, AdoptionRow, CurrentSource } from "../orientation";
import type { HeaderPlan } from "./headers";

/** What orientation.adopt decides on inside its transaction (see OrientationStore.adoptCandidate). */
export interface AdoptRules<R> {
  /** The adoption this operation id already made: throws when it was of another candidate; its reply is answered again. */
  repeat(done: AdoptionRow): void;
  /** The candidate as the transaction reads it: throws to refuse (none, or not adoptable by this session). */
  candidate(candidate: CandidateRow | undefined): void;
  /** The adopting session's header observation, of the sources with this adoption in them (HeadersStore.observeHeader's plan). */
  header: HeaderPlan<string | null>;
  /** The reply, recorded with the adoption. */
  reply(candidate: CandidateRow, headerDigest: string | null): R;
}

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
  /**
   * orientation.stage in one transaction: the candidate staged under `row.id` already is `repeat`ed
   * (it throws when it differs) and returned, `created` false; else `row` is staged.
   */
  stageCandidate(row: Omit<typeof orientationCandidates.$inferInsert, "status">, repeat: (existing: CandidateRow) => void): Promise<{ row: CandidateRow; created: boolean }>;
  /**
   * orientation.adopt in one transaction of the adopting session (fenced by its lease): the
   * operation's earlier adoption answered again, or the candidate vetted, the adoption recorded,
   * the candidate marked adopted, the session's header observed with it (a revision appended when
   * its text changed), and the reply recorded with the adoption. Returns the reply.
   */
  adoptCandidate<R>(adoption: { operationId: string; candidateId: string; sessionId: string; executionId: string; requestId: string; step: number; adoptedAtMs: number }, rules: AdoptRules<R>, headerAtMs: number): Promise<R>;
  /** Every scope that has an adoption, global first. */
  adoptedScopes(): Promise<Scope[]>;
}
