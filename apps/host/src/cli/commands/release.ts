import type { Command } from "commander";
import { dataLayout } from "../../paths";
import { optionsOf, run, userPath, type CommonOptions } from "../command";
import { dataDirOf } from "../target";

/** `klbr release DRAFT`: snapshot a behaviour source draft into an immutable release (activate it from a cell). */
export async function releaseCommand(draft: string, opts: CommonOptions & { json?: boolean }): Promise<number> {
  const { snapshotRelease } = await import("@klbr/activation");
  const snapshot = snapshotRelease(userPath(draft), dataLayout(dataDirOf(opts)).releases);
  if (opts.json) process.stdout.write(`${JSON.stringify(snapshot)}\n`);
  else process.stdout.write(`${snapshot.path}\n`);
  process.stderr.write(`klbr: release ${snapshot.digest}${snapshot.reused ? " (already present)" : ""}\n`);
  return 0;
}

/** Register `klbr release`. */
export function register(program: Command): void {
  program
    .command("release")
    .description("snapshot a behaviour source draft into releases/<digest>; prints its path")
    .argument("<draft>", "the draft source directory")
    .option("--json", "machine output on stdout")
    .action(run(async (cmd, draft) => releaseCommand(draft!, optionsOf(cmd))));
}
