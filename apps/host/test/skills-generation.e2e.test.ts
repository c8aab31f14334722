import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { desc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { kernelResets } from "../src/db/schema";
import type { Host } from "../src/runtime/host";
import { resultOf, startTestHost } from "./helpers";

let host: Host;
let dataDir: string;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ host, dataDir, close } = await startTestHost());
});
afterAll(async () => close());

const generationRevision = () =>
  host.db.select().from(kernelResets).where(eq(kernelResets.sessionId, "root")).orderBy(desc(kernelResets.id)).limit(1).get()!.skillsRevision;
function writeSkill(id: string): void {
  mkdirSync(join(dataDir, "skills", id), { recursive: true });
  writeFileSync(join(dataDir, "skills", id, "SKILL.md"), `# ${id}\n\nbody of ${id}\n`);
}

describe("skills are served from the set the generation loaded (C4, spec: the next generation)", () => {
  test("a skill written mid-turn is not offered in the same generation; inspect and status tell both revisions apart", async () => {
    const loaded = generationRevision();
    const r = await host.execute(
      [
        "import os, pathlib",
        `d = pathlib.Path(${JSON.stringify(join(dataDir, "skills", "fresh"))}); d.mkdir(parents=True)`,
        "(d / 'SKILL.md').write_text('# fresh\\n\\nwritten mid-turn\\n')",
        "ix = await runtime.skills_index()",
        "i = await runtime.inspect()",
        "missing = None",
        "try:\n    await runtime.skills_load('fresh')\nexcept Exception as e:\n    missing = e.code",
        "(ix['ids'], ix['revision'] == i['skills_revision'], i['skills_revision'] != i['skills_live_revision'], missing)",
      ].join("\n"),
    );
    expect(resultOf(r)).toBe("([], True, True, 'not_found')");
    const status = (await host.status()) as { skills_revision: string | null; skills_live_revision: string | null; workbenches: Array<{ skills_revision: string | null }> };
    expect(status.skills_revision).toBe(loaded);
    expect(status.workbenches[0]!.skills_revision).toBe(loaded);
    expect(status.skills_live_revision).not.toBe(loaded);
  });

  test("the next generation loads it, and kernel.reset records that revision", async () => {
    writeSkill("later");
    expect((await host.execute("import os\nos._exit(0)")).status).toBe("failed");
    const r = await host.execute("ix = await runtime.skills_index()\ni = await runtime.inspect()\n(ix['ids'], ix['revision'] == i['skills_revision'] == i['skills_live_revision'])");
    expect(resultOf(r)).toBe("(['fresh', 'later'], True)");
    const ix = await host.execute("(await runtime.skills_index())['revision']");
    expect(resultOf(ix)).toBe(`'${generationRevision()}'`);
    expect(resultOf(await host.execute("(await runtime.skills_load('later'))['body']"))).toBe("'# later\\n\\nbody of later\\n'");
  });

  test("a body changed since the generation loaded it is refused as unavailable", async () => {
    writeFileSync(join(dataDir, "skills", "later", "SKILL.md"), "# later\n\nchanged\n");
    const r = await host.execute("try:\n    await runtime.skills_load('later')\nexcept Exception as e:\n    c = e.code\nc");
    expect(resultOf(r)).toBe("'unavailable'");
  });
});
