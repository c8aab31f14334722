import { createInterface } from "node:readline";
import type { Command } from "commander";
import { optionsOf, run, sessionOption, type CommonOptions } from "../command";
import { LiveExecutionWriter } from "../live-output";
import { describeEvent } from "../render";
import { openTarget } from "../target";

const HELP = `Cells run in the session's workbench; a block continues until an empty line.
  :say TEXT   post operator input (wakes a waiting session)
  :status     workers, generations, epoch
  :help       this text
  :quit       leave (Ctrl-D too)
`;

/** Whether a line opens or continues a block, so the cell is not sent yet. */
function continues(buffer: string[], line: string): boolean {
  if (buffer.length === 0) return /:\s*(#.*)?$/.test(line) || /\\$/.test(line);
  return line.trim() !== "";
}

/** `klbr repl`: interactive cells against the daemon, or an embedded host when none runs. */
export async function replCommand(opts: CommonOptions & { session?: string }): Promise<number> {
  const session = sessionOption(opts.session);
  const target = await openTarget(opts, () => process.stderr.write("klbr: no daemon running; using an embedded host\n"));
  await target.subscribe((event) => {
    // Another session's messages and wakes are not this one's to show.
    const about = (event as { session_id?: unknown }).session_id;
    if (about !== undefined && about !== (session ?? "root")) return;
    const line = describeEvent(event);
    if (line) process.stdout.write(`${line}\n`);
  });
  const interactive = process.stdin.isTTY === true;
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: interactive, prompt: "klbr> " });
  process.stderr.write(`klbr repl (${target.embedded ? "embedded host" : "daemon"}, session ${session ?? "root"}); :help for commands\n`);
  let buffer: string[] = [];
  const prompt = () => {
    rl.setPrompt(buffer.length > 0 ? "...   " : "klbr> ");
    if (interactive) rl.prompt();
  };
  // Ctrl-C interrupts a running cell (the C7 ladder); at the prompt it drops the unfinished block.
  let running = false;
  const onSigint = () => {
    if (running) {
      void target.interrupt(session).catch(() => undefined);
      return;
    }
    buffer = [];
    process.stdout.write("\n");
    prompt();
  };
  rl.on("SIGINT", onSigint);
  process.on("SIGINT", onSigint);
  prompt();
  for await (const line of rl) {
    if (buffer.length === 0 && line.startsWith(":")) {
      const [command, ...rest] = line.slice(1).split(" ");
      if (command === "quit" || command === "q") break;
      if (command === "say") {
        const result = (await target.say(rest.join(" "), session)) as { event_id: number };
        process.stdout.write(`[input] event ${result.event_id} recorded\n`);
      } else if (command === "status") {
        process.stdout.write(`${JSON.stringify(await target.status(), null, 2)}\n`);
      } else {
        process.stdout.write(HELP);
      }
      prompt();
      continue;
    }
    if (continues(buffer, line)) {
      buffer.push(line);
      prompt();
      continue;
    }
    if (buffer.length > 0 && line.trim() === "") {
      // an empty line closes the block
    } else {
      buffer.push(line);
    }
    const code = buffer.join("\n");
    buffer = [];
    if (code.trim() !== "") {
      running = true;
      try {
        // The cell's output shows under it as it is written (C16), the result when it ends.
        const writer = new LiveExecutionWriter(process.stdout, process.stderr);
        const report = await target.execute(code, session, (event) => writer.write(event));
        writer.finish(report);
      } catch (error) {
        // A refused cell (a stopped peer's session, say) is reported; the repl goes on.
        const e = error as Error & { code?: string };
        process.stderr.write(`klbr: ${e.code ? `${e.code}: ` : ""}${e.message}\n`);
      } finally {
        running = false;
      }
    }
    prompt();
  }
  process.off("SIGINT", onSigint);
  rl.close();
  await target.close();
  return 0;
}

/** Register `klbr repl`. */
export function register(program: Command): void {
  program
    .command("repl")
    .description("interactive cells (daemon, or an embedded host when none runs); :say TEXT posts operator input")
    .option("-s, --session <id>", "the session whose workbench runs the cells and gets :say, e.g. a peer's session_id (default: the root session)")
    .action(run(async (cmd) => replCommand(optionsOf(cmd))));
}
