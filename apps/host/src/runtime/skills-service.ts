import { indexSkills, loadSkill, materializeSkills, type SkillIndex } from "@klbr/skills";
import { ReplyError } from "../requests/errors";
import { instructionSources, type InstructionSource } from "./contract";

/** The host's view of the two skill roots: the last index, and the model-visible form of it. */
export class SkillsService {
  private last: SkillIndex | null = null;

  constructor(private readonly roots: { builtinDir: string; managedDir: string }) {}

  /** The revision of the last index taken (the live set as of then; a generation keeps its own). */
  get revision(): string | null {
    return this.last?.revision ?? null;
  }

  /** The last index taken, or null before the first. */
  get lastIndex(): SkillIndex | null {
    return this.last;
  }

  /** The live index's revision (both roots indexed now), or null when a root is unusable. */
  async liveRevision(): Promise<string | null> {
    return (await this.reindex().catch(() => null))?.revision ?? null;
  }

  /** Index both roots again. */
  async reindex(): Promise<SkillIndex> {
    this.last = await indexSkills(this.roots);
    return this.last;
  }

  /** The model-visible index: ids only, refusals with reasons, the set revision. */
  view(index: SkillIndex): unknown {
    return {
      revision: index.revision,
      ids: index.skills.map((s) => s.id),
      refused: index.refused.map((r) => ({ name: r.name, root: r.root, reason: r.reason })),
    };
  }

  /** One body of `index` (a generation's set), refused when its bytes changed since that index was taken. */
  async load(index: SkillIndex, id: string): Promise<unknown> {
    try {
      return await loadSkill(index, id);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === "SKILL_NOT_FOUND") throw new ReplyError("not_found", (error as Error).message);
      // The body changed between indexing and reading, or a root is unusable: nothing half-read is served.
      if (code === "SKILL_CHANGED" || code === "SKILL_ROOT_INVALID") throw new ReplyError("unavailable", (error as Error).message);
      throw error;
    }
  }

  /** Write the validated set for a worker's --skills. */
  async materialize(index: SkillIndex, dir: string): Promise<string> {
    return materializeSkills(index, dir);
  }

  /** The instruction sources this index implies, with a session's adopted sources between contract and skills. */
  sources(index: SkillIndex, adopted: readonly InstructionSource[] = []): InstructionSource[] {
    return instructionSources(index, adopted);
  }
}

/**
 * skills.index and skills.load for a session: the set its current workbench generation loaded
 * (C4: a skill written since is the next generation's).
 */
export class SessionSkills {
  constructor(
    private readonly skills: SkillsService,
    private readonly generations: { skillSet(sessionId: string): SkillIndex },
  ) {}

  /** The session's generation's set, as the model may see it. */
  index(sessionId: string): unknown {
    return this.skills.view(this.generations.skillSet(sessionId));
  }

  /** One skill body of the session's generation's set, checked against the digest it was indexed with. */
  load(sessionId: string, id: string): unknown {
    return this.skills.load(this.generations.skillSet(sessionId), id);
  }
}
