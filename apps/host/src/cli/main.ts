import { Command, CommanderError } from "commander";
import { hostVersion } from "../version";
import { COMMANDS } from "./commands";
import { EXIT, EXIT_HELP } from "./exit-codes";

// Command bodies import what they need when they run: `klbr exec` against a daemon should not pay
// for loading the whole host (SQLite, valibot, the supervisor) just to send one frame.

/** The `klbr` program: global options, then one registration per command file (commands/index.ts). */
export function buildProgram(): Command {
  const program = new Command("klbr")
    .description("klbr runtime: run an agent's Python cells in supervised workers, with a durable log")
    .version(hostVersion(), "-V, --version", "print the version")
    .option("-d, --data-dir <dir>", "data directory (default: KLBR_DATA_DIR or the platform data dir)")
    .option("-w, --workspace <dir>", "workspace for cells and workspace.run (default: the current directory)")
    .addHelpText("after", EXIT_HELP)
    // Inherited by every command added below: usage errors are thrown (exit 64), not process.exit()ed.
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(`klbr: CLI_USAGE: ${text.replace(/^error: /, "")}`) })
    .showHelpAfterError("hint: run `klbr help` or `klbr COMMAND --help` for usage");
  for (const register of COMMANDS) register(program);
  return program;
}

/** Entry point of the `klbr` binary: sets process.exitCode, never exits (output still queued for a pipe must drain). */
export async function main(argv: string[] = process.argv): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    // --help and --version end here with 0; commander has already printed its usage error.
    process.exitCode = error.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
  }
}

/**
 * Exit once stdout and stderr have handed everything to the kernel. A reader that is slow (`| (sleep 1; wc -l)`)
 * is waited for; a reader that went away (EPIPE) is not. Exiting at all only guards against a stray
 * handle keeping a finished command alive.
 */
export async function exitWhenDrained(): Promise<never> {
  const flushed = (stream: NodeJS.WriteStream) =>
    new Promise<void>((resolve) => {
      if (stream.destroyed || !stream.writable) return resolve();
      stream.once("error", () => resolve());
      stream.write("", () => resolve());
    });
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(process.exitCode ?? 0);
}
