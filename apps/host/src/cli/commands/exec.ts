import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { HostError } from "../../errors";
import { optionsOf, run, sessionOption, userPath, type CommonOptions } from "../command";
import { LiveExecutionWriter } from "../live-output";
import { EXIT_BY_STATUS } from "../render";
import { openTarget } from "../target";

/** Said once when no daemon runs, so nobody expects the namespace to be there for the next command. */
export const EMBEDDED_NOTICE =
  "klbr: no daemon running: this cell runs in a host embedded in this command, and its namespace ends with it; run `klbr serve` to keep one\n";

/**
 * `klbr exec CODE | -f FILE`: run one cell, print its outputs, exit by its status. Its stdout and
 * stderr are printed as the cell writes them when the host streams live output (C16), then the
 * result and the rest of the record; `--json` prints the one record and nothing live.
 */
export async function execCommand(code: string | undefined, opts: CommonOptions & { file?: string; json?: boolean; session?: string }): Promise<number> {
  if ((code === undefined) === (opts.file === undefined)) throw new HostError("CLI_USAGE", "give the cell as an argument or with -f FILE (exactly one)");
  const session = sessionOption(opts.session);
  const source = opts.file !== undefined ? readCell(opts.file) : code!;
  const target = await openTarget(opts, () => process.stderr.write(EMBEDDED_NOTICE));
  // Ctrl-C interrupts the cell (the C7 ladder), it does not abandon it: the record still closes.
  const onSigint = () => void target.interrupt(session).catch(() => undefined);
  process.on("SIGINT", onSigint);
  try {
    if (opts.json) {
      const report = await target.execute(source, session);
      process.stdout.write(`${JSON.stringify(report)}\n`);
      return EXIT_BY_STATUS[report.status] ?? 70;
    }
    const writer = new LiveExecutionWriter(process.stdout, process.stderr);
    const report = await target.execute(source, session, (event) => writer.write(event));
    writer.finish(report);
    return EXIT_BY_STATUS[report.status] ?? 70;
  } finally {
    process.off("SIGINT", onSigint);
    await target.close();
  }
}

function readCell(file: string): string {
  const path = file === "-" ? file : userPath(file);
  try {
    return readFileSync(path === "-" ? 0 : path, "utf8");
  } catch (error) {
    throw new HostError("CLI_USAGE", `cannot read the cell from ${JSON.stringify(path)}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** Register `klbr exec`. */
export function register(program: Command): void {
  program
    .command("exec")
    .description("run one cell and print its outputs; exit 0 ok/yielded, 1 error, 130 interrupted, 70 failed, 75 nothing ran")
    .argument("[code]", "Python source of the cell")
    .option("-f, --file <file>", "read the cell from a file (- for stdin)")
    .option("--json", "the execution record as JSON on stdout")
    .option("-s, --session <id>", "the session whose workbench runs it, e.g. a peer's session_id (default: the root session)")
    .action(run(async (cmd, code?: string) => execCommand(code, optionsOf(cmd))));
}
