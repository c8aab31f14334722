import { readFileSync } from "node:fs";
import { HostError } from "../../errors";
import { EXIT_BY_STATUS, writeExecution } from "../render";
import { openTarget, type CommonOptions } from "../target";

/** `klbr exec CODE | -f FILE`: run one cell, print its outputs, exit by its status. */
export async function execCommand(code: string | undefined, opts: CommonOptions & { file?: string; json?: boolean }): Promise<number> {
  if ((code === undefined) === (opts.file === undefined)) throw new HostError("CLI_USAGE", "give the cell as an argument or with -f FILE (exactly one)");
  const source = opts.file !== undefined ? readCell(opts.file) : code!;
  const target = await openTarget(opts, () => process.stderr.write("klbr: no daemon running; using an embedded host\n"));
  // Ctrl-C interrupts the cell (the C7 ladder), it does not abandon it: the record still closes.
  const onSigint = () => void target.interrupt().catch(() => undefined);
  process.on("SIGINT", onSigint);
  try {
    const report = await target.execute(source);
    if (opts.json) process.stdout.write(`${JSON.stringify(report)}\n`);
    else writeExecution(report, process.stdout, process.stderr);
    return EXIT_BY_STATUS[report.status] ?? 70;
  } finally {
    process.off("SIGINT", onSigint);
    await target.close();
  }
}

function readCell(file: string): string {
  try {
    return readFileSync(file === "-" ? 0 : file, "utf8");
  } catch (error) {
    throw new HostError("CLI_USAGE", `cannot read the cell from ${JSON.stringify(file)}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}
