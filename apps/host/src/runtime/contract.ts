import { refusalLines, type RefusedSkill } from "@klbr/skills";

/**
 * The built-in contract: the part of the instruction header the host itself states. The other
 * instruction source is the skill index (ids only, plus refusals), so a skill written during a
 * turn shows up as a header revision rather than a rewrite of the head.
 */
export const CONTRACT_TEXT = `You are running inside klbr runtime. Your Python cells run in a persistent workbench namespace.
Use the \`runtime\` object for host effects: \`await runtime.send(text)\` speaks to the operator (delivery is
reviewed; a held receipt is not delivery), \`await runtime.wait(seconds, reason=...)\` ends the turn durably
(code after it does not run), \`await runtime.run(argv)\` runs a command in the workspace.
A skill is read with \`await runtime.skills_load(id)\` or \`import klbr.skills.<id>\`; reading grants nothing.
`;

/** One named instruction source. */
export interface InstructionSource {
  name: string;
  text: string;
}

/** The skills source text: ids only, then refused ones with reasons, so an author learns why. */
export function skillsSourceText(index: { skills: Array<{ id: string }>; refused: Array<Pick<RefusedSkill, "name" | "root" | "reason">> }): string {
  const lines = ["Skills available (load by id):"];
  for (const s of index.skills) lines.push(`- ${s.id}`);
  if (index.skills.length === 0) lines.push("- (none)");
  if (index.refused.length > 0) {
    lines.push("Skills refused:");
    // One line per name, naming the roots: an id in both roots is one refusal, not two identical lines.
    for (const line of refusalLines(index.refused)) lines.push(`- ${line}`);
  }
  return `${lines.join("\n")}\n`;
}

/**
 * The instruction sources of a session, in header order (C11): the contract, then the sources
 * the session adopted through orientation (already ordered, see `adoptedSources`), then skills.
 */
export function instructionSources(index: Parameters<typeof skillsSourceText>[0], adopted: readonly InstructionSource[] = []): InstructionSource[] {
  return [{ name: "contract", text: CONTRACT_TEXT }, ...adopted, { name: "skills", text: skillsSourceText(index) }];
}
