import { renameSync, rmSync, writeFileSync } from "node:fs";
import type { Command } from "commander";
import { formatBytes } from "@klbr/transcript";
import { HostError } from "../../errors";
import { optionsOf, run, userPath, type CommonOptions } from "../command";
import { databaseOptions, openReadStore, type DatabaseOptions } from "../read-store";

/**
 * `klbr display get DIGEST -o FILE`: write one stored display blob (C20) out, read straight from
 * the database (no daemon needed; PostgreSQL with `--database`): an image's bytes, or a bundle's
 * JSON. DIGEST is what `klbr exec` and `klbr log` print (`sha256:` and 12 or more hex digits,
 * unique). Written to a temporary name and renamed, so FILE is either the whole blob or
 * untouched; `-o -` writes to stdout.
 */
export async function displayGetCommand(digest: string, opts: CommonOptions & DatabaseOptions & { output?: string }): Promise<number> {
  if (opts.output === undefined || opts.output === "") throw new HostError("CLI_USAGE", "say where to write it: -o FILE (or -o - for stdout)");
  const { store } = await openReadStore(opts);
  let blob;
  try {
    blob = await store.resolveBlob(digest);
  } finally {
    await store.close();
  }
  if (opts.output === "-") {
    process.stdout.write(blob.data);
  } else {
    writeWhole(userPath(opts.output), blob.data);
    process.stderr.write(`klbr: wrote ${blob.mediaType} (${formatBytes(blob.bytes)}, ${blob.digest}) to ${opts.output}\n`);
  }
  return 0;
}

/** Write `data` to `path` whole or not at all: a temporary file beside it, then a rename. */
function writeWhole(path: string, data: Buffer): void {
  const temporary = `${path}.klbr-${process.pid}.tmp`;
  try {
    writeFileSync(temporary, data, { flag: "wx", mode: 0o644 });
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    const code = (error as NodeJS.ErrnoException).code ?? "";
    throw new HostError("DISPLAY_WRITE_FAILED", `cannot write ${path}: ${code || (error as Error).message}`);
  }
}

/** Register `klbr display`. */
export function register(program: Command): void {
  const display = program.command("display").description("the rich displays cells showed (C20): plots, images, tables");
  const get = display
    .command("get")
    .description("write a stored display image (or bundle) out by the digest `klbr exec` and `klbr log` print")
    .argument("<digest>", "sha256:<hex>, or its first 12 or more hex digits")
    .requiredOption("-o, --output <file>", "where to write it (- for stdout)");
  databaseOptions(get).action(run(async (cmd, digest?: string) => displayGetCommand(digest ?? "", optionsOf(cmd))));
}
