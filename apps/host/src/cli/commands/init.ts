import { mkdirSync } from "node:fs";
import { openActivationStore } from "@klbr/activation";
import { migrateHostDb, openSqlite } from "../../db/open";
import { dataLayout } from "../../paths";
import { dataDirOf, type CommonOptions } from "../target";

/** `klbr init`: the data directory, the managed skills directory and the migrated database. */
export async function initCommand(opts: CommonOptions & { json?: boolean }): Promise<number> {
  const layout = dataLayout(dataDirOf(opts));
  for (const dir of [layout.dataDir, layout.releases, layout.managedSkills]) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const sqlite = openSqlite(layout.database);
  try {
    migrateHostDb(sqlite);
    openActivationStore(sqlite).migrate();
  } finally {
    sqlite.close();
  }
  if (opts.json) process.stdout.write(`${JSON.stringify(layout)}\n`);
  else process.stderr.write(`klbr: initialised ${layout.dataDir}\n  database ${layout.database}\n  managed skills ${layout.managedSkills}\n`);
  return 0;
}
