import { sha256Hex } from "@klbr/header";
import { scopeColumns, scopeOf, type CurrentSource, type Scope } from "../store/orientation";
import type { RequestContext } from "./context";
import { invalidRequest, ReplyError } from "./errors";
import { checkIdentifier, checkTextBytes } from "./limits";

/** C11: a candidate's text is 1..65,536 UTF-8 bytes. */
export const MAX_CANDIDATE_TEXT_BYTES = 65_536;

/** Instruction sources the host writes itself: no candidate may become one. */
export const RESERVED_TARGETS: readonly string[] = ["contract", "skills"];

/** `orientation.stage` reply (C11). */
export interface StageReply {
  candidate_id: string;
  digest: string;
  target: string;
  scope: Scope;
  status: "staged" | "adopted";
}

/** `orientation.current` reply (C11). */
export interface CurrentReply {
  scope: Scope;
  sources: CurrentSource[];
}

/** `orientation.adopt` reply (C11). */
export interface AdoptReply {
  candidate_id: string;
  target: string;
  digest: string;
  scope: Scope;
  status: "adopted";
  header_digest: string | null;
}

/** Check a scope (C11): `{"kind": "global"}` or `{"kind": "session", "session_id": id}`, nothing else. */
export function checkScope(value: unknown): Scope {
  const scope = value as Record<string, unknown> | null;
  if (typeof scope !== "object" || scope === null || Array.isArray(scope)) throw invalidRequest("scope must be an object");
  const keys = Object.keys(scope);
  if (scope.kind === "global") {
    if (keys.length !== 1) throw invalidRequest(`a global scope has only "kind", got ${JSON.stringify(keys)}`);
    return { kind: "global" };
  }
  if (scope.kind === "session") {
    if (keys.length !== 2 || !("session_id" in scope)) throw invalidRequest(`a session scope has exactly "kind" and "session_id", got ${JSON.stringify(keys)}`);
    return { kind: "session", session_id: checkIdentifier("scope.session_id", scope.session_id) };
  }
  throw invalidRequest(`unknown scope kind ${JSON.stringify(scope.kind)}; use {"kind": "global"} or {"kind": "session", "session_id": ID}`);
}

function sameScope(a: Scope, b: Scope): boolean {
  return a.kind === b.kind && (a.kind === "global" || a.session_id === (b as { session_id: string }).session_id);
}

/**
 * orientation.stage: text the session proposes as the instruction source `target` for a scope.
 * Staging the same candidate id again with the same text (and target and scope) answers as the
 * first time did, with the candidate's status now; anything else under that id is `conflict`.
 */
export async function orientationStage(
  ctx: RequestContext,
  params: { candidate_id: string; text: string; target: string; scope: unknown },
): Promise<StageReply> {
  const { host, live, requestId } = ctx;
  const id = checkIdentifier("candidate_id", params.candidate_id);
  const text = checkTextBytes("text", params.text, MAX_CANDIDATE_TEXT_BYTES);
  const target = checkIdentifier("target", params.target);
  if (RESERVED_TARGETS.includes(target)) {
    throw invalidRequest(`target ${JSON.stringify(target)} is written by the host itself; choose another instruction source name`);
  }
  const scope = checkScope(params.scope);
  const digest = sha256Hex(text);
  const { row, created } = await host.store.stageCandidate({ id, sessionId: live.sessionId, executionId: live.id, requestId, target, ...scopeColumns(scope), text, digest, stagedAtMs: host.now() }, (existing) => {
    const same = existing.digest === digest && existing.text === text && existing.target === target && sameScope(scopeOf(existing), scope);
    if (!same) throw new ReplyError("conflict", `candidate ${JSON.stringify(id)} is already staged with another text, target or scope`);
  });
  return created ? { candidate_id: id, digest, target, scope, status: "staged" } : { candidate_id: id, digest, target, scope: scopeOf(row), status: row.status };
}

/** orientation.current: the sources adopted for exactly that scope (not merged with any other). */
export async function orientationCurrent(ctx: RequestContext, params: { scope: unknown }): Promise<CurrentReply> {
  const scope = checkScope(params.scope);
  return { scope, sources: await ctx.host.store.currentSources(scope) };
}

/**
 * orientation.adopt: the candidate's text becomes the instruction source `target` for every
 * session in its scope, replacing an earlier adoption for that target and scope. Idempotent by
 * `operation_id`: a repeat gets the reply the first got. The adopting session's header observes
 * the change as its own (origin session, this execution and step); the other sessions in scope
 * observe it at their next request. One immediate transaction: of two racing adoptions of the same
 * target and scope, each is recorded and the later one is the source.
 */
export async function orientationAdopt(ctx: RequestContext, params: { candidate_id: string; operation_id: string }): Promise<AdoptReply> {
  const { host, live, requestId } = ctx;
  const candidateId = checkIdentifier("candidate_id", params.candidate_id);
  const operationId = checkIdentifier("operation_id", params.operation_id);
  const step = ctx.step ?? 1;
  const observation = host.instructions.observation(live.sessionId, { origin: "session", execution_id: live.id, step });
  return host.store.adoptCandidate<AdoptReply>(
    { operationId, candidateId, sessionId: live.sessionId, executionId: live.id, requestId, step, adoptedAtMs: host.now() },
    {
      repeat: (done) => {
        if (done.candidateId !== candidateId) {
          throw new ReplyError("conflict", `operation ${JSON.stringify(operationId)} already adopted candidate ${JSON.stringify(done.candidateId)}`);
        }
      },
      candidate: (candidate) => {
        if (!candidate) throw new ReplyError("not_found", `candidate ${JSON.stringify(candidateId)} does not exist`);
        const scope = scopeOf(candidate);
        if (scope.kind === "session" && scope.session_id !== live.sessionId) {
          throw invalidRequest(`candidate ${JSON.stringify(candidateId)} is staged for session ${JSON.stringify(scope.session_id)}; session ${JSON.stringify(live.sessionId)} cannot adopt it`);
        }
      },
      header: observation.plan,
      reply: (candidate, headerDigest) => ({ candidate_id: candidateId, target: candidate.target, digest: candidate.digest, scope: scopeOf(candidate), status: "adopted", header_digest: headerDigest }),
    },
    observation.atMs,
  );
}
