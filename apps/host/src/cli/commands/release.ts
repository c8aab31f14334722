import { snapshotRelease } from "@klbr/activation";
import { dataLayout } from "../../paths";
import { dataDirOf, type CommonOptions } from "../target";

/** `klbr release DRAFT`: snapshot a behaviour source draft into an immutable release (activate it from a cell). */
export async function releaseCommand(draft: string, opts: CommonOptions & { json?: boolean }): Promise<number> {
  const snapshot = snapshotRelease(draft, dataLayout(dataDirOf(opts)).releases);
  if (opts.json) process.stdout.write(`${JSON.stringify(snapshot)}\n`);
  else process.stdout.write(`${snapshot.path}\n`);
  process.stderr.write(`klbr: release ${snapshot.digest}${snapshot.reused ? " (already present)" : ""}\n`);
  return 0;
}
