import { Command } from "commander";

// Commands are imported when they run: `klbr exec` against a daemon should not pay for loading
// the whole host (SQLite, valibot, the supervisor) just to send one frame.

/** A command body: the parsed command (for its options) and its positional arguments. */
type Action = (command: Command, ...positional: string[]) => Promise<number>;

/** Run a command and turn its result or its coded error into the exit status. */
function run(action: Action) {
  return async (...args: unknown[]) => {
    // commander passes the positional arguments, then the options, then the command itself.
    const command = args.at(-1) as Command;
    const positional = args.slice(0, -2) as string[];
    try {
      process.exitCode = await action(command, ...positional);
    } catch (error) {
      const e = error as Error & { code?: string };
      process.stderr.write(`klbr: ${e.code ? `${e.code}: ` : ""}${e.message}\n`);
      process.exitCode = e.code === "CLI_USAGE" ? 64 : 1;
    }
  };
}

/** The `klbr` program. */
export function buildProgram(): Command {
  const program = new Command("klbr")
    .description("klbr runtime: run an agent's Python cells in supervised workers, with a durable log")
    .option("-d, --data-dir <dir>", "data directory (default: KLBR_DATA_DIR or the platform data dir)")
    .option("-w, --workspace <dir>", "workspace for cells and workspace.run (default: the current directory)")
    .showHelpAfterError();
  const common = (cmd: Command) => ({ ...program.opts(), ...cmd.opts() });

  program.command("init").description("create the data directory, managed skills directory and database").option("--json", "machine output on stdout")
    .action(run(async (cmd) => (await import("./commands/init")).initCommand(common(cmd))));
  program.command("serve").description("run the daemon (control socket in the data directory)")
    .action(run(async (cmd) => (await import("./commands/serve")).serveCommand(common(cmd))));
  program.command("exec").description("run one cell and print its outputs; exit 0 ok/yielded, 1 error, 130 interrupted, 70 failed")
    .argument("[code]", "Python source of the cell").option("-f, --file <file>", "read the cell from a file (- for stdin)").option("--json", "the execution record as JSON on stdout")
    .action(run(async (cmd, code?: string) => (await import("./commands/exec")).execCommand(code, common(cmd))));
  program.command("repl").description("interactive cells (daemon, or an embedded host when none runs); :say TEXT posts operator input")
    .action(run(async (cmd) => (await import("./commands/repl")).replCommand(common(cmd))));
  program.command("log").description("print the durable log").option("--follow", "keep printing new entries").option("--json", "one JSON object per line").option("-n, --limit <n>", "only the last n entries")
    .action(run(async (cmd) => (await import("./commands/log")).logCommand(common(cmd))));
  program.command("release").description("snapshot a behaviour source draft into releases/<digest>; prints its path")
    .argument("<draft>", "the draft source directory").option("--json", "machine output on stdout")
    .action(run(async (cmd, draft) => (await import("./commands/release")).releaseCommand(draft!, common(cmd))));
  program.command("status").description("workers, pids, generations, epoch, skills revision, tails").option("--json", "machine output on stdout")
    .action(run(async (cmd) => (await import("./commands/status")).statusCommand(common(cmd))));
  return program;
}

/** Entry point of the `klbr` binary. */
export async function main(argv: string[] = process.argv): Promise<void> {
  await buildProgram().parseAsync(argv);
}
