import { mkdirSync } from "node:fs";
import type { Command } from "commander";
import { dataLayout } from "../../paths";
import { optionsOf, run, type CommonOptions } from "../command";
import { dataDirOf } from "../target";

/** `klbr init`: the data directory, the managed skills directory and the migrated database. */
export async function initCommand(opts: CommonOptions & { json?: boolean }): Promise<number> {
  const layout = dataLayout(dataDirOf(opts));
  for (const dir of [layout.dataDir, layout.releases, layout.managedSkills]) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { openActivationStore } = await import("@klbr/activation");
  const { migrateHostDb, openHostDatabase } = await import("../../db/open");
  const { secureDataDir } = await import("../../db/secure");
  secureDataDir(layout.dataDir);
  const sqlite = openHostDatabase(layout.database);
  try {
    migrateHostDb(sqlite);
    openActivationStore(sqlite).migrate();
  } finally {
    sqlite.close();
  }
  if (opts.json) process.stdout.write(`${JSON.stringify(layout)}\n`);
  else process.stdout.write(`initialised ${layout.dataDir}\n  database ${layout.database}\n  managed skills ${layout.managedSkills}\n`);
  return 0;
}

/** Register `klbr init`. */
export function register(program: Command): void {
  program
    .command("init")
    .description("create the data directory, managed skills directory and database; prints what it made")
    .option("--json", "machine output on stdout")
    .action(run(async (cmd) => initCommand(optionsOf(cmd))));
}
