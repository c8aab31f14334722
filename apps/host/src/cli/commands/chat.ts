import { createInterface, type Interface } from "node:readline";
import type { Command } from "commander";
import { HostError } from "../../errors";
import { ChatKeys } from "../chat-keys";
import { ChatView } from "../chat-view";
import { optionsOf, run, type CommonOptions } from "../command";
import { openTarget } from "../target";

/**
 * `klbr chat`: an interactive session. Lines typed are operator input; the model's streamed text,
 * its cells and their results, its sends and each request's usage are shown as they happen, with
 * a spinner while the model is thinking. Through the daemon when one runs (it must drive sessions),
 * otherwise an embedded host that drives the session with the route. In a terminal, Ctrl-C stops
 * the running turn and a second one within 2 s leaves (exit 130), as Ctrl-D does (exit 0); a line
 * typed while a turn runs is queued until it ends (`ChatKeys`). With stdin not a terminal, each
 * line waits for the turn it started to end, so a script reads a whole session in order.
 */
export async function chatCommand(opts: CommonOptions & { route?: string; session?: string }): Promise<number> {
  const session = opts.session ?? "root";
  if (!/^[A-Za-z0-9_.-]{1,128}$/.test(session)) throw new HostError("CLI_USAGE", `--session must be an identifier, got ${JSON.stringify(session)}`);
  const target = await openTarget(opts, () => process.stderr.write("klbr: no daemon running; chatting through an embedded host\n"), { drive: opts.route ? { route: opts.route } : {} });
  const tty = process.stdin.isTTY === true;
  const view = new ChatView(process.stdout, process.stderr, process.stderr.isTTY === true);
  let turnEnded: (() => void) | null = null;
  let lines: Interface | null = null;
  let exitCode = 0;
  const keys = new ChatKeys({
    stopTurn: async () => (await target.stopTurn(session)).stopping,
    say: async (text) => void (await target.say(text, session)),
    note: (text) => view.note(text),
    prompt: () => {
      if (tty) lines?.prompt();
    },
    leave: (code) => {
      exitCode = code;
      lines?.close();
    },
  });
  const onCtrlC = () => void keys.ctrlC().catch((error: Error) => view.note(`[${error.message}]`));
  try {
    const status = (await target.status()) as { driving?: { route: string; model: string } | null };
    if (!status.driving) throw new HostError("CHAT_NOT_DRIVEN", "the running daemon drives no sessions: add a route (`klbr route add`) and restart `klbr serve`");
    process.stderr.write(`klbr: chatting with ${status.driving.route} (${status.driving.model}) in session ${session}; Ctrl-C stops the turn, Ctrl-D (or Ctrl-C twice) leaves\n`);
    await target.subscribe((raw) => {
      const event = raw as Record<string, unknown>;
      if (event.session_id !== session || event.type === "output") return;
      view.render(event);
      if (event.type !== "model") return;
      if (event.phase === "turn_start") keys.turnStarted();
      if (event.phase === "turn_end") {
        turnEnded?.();
        if (tty) void keys.turnEnded().catch((error: Error) => view.note(`[${error.message}]`));
      }
    });
    // The model's cells show their output under them while they run (C16), when the host streams it.
    await target.watchOutput({ session }, (event) => view.output(event));
    lines = createInterface({ input: process.stdin, ...(tty ? { output: process.stdout } : {}), terminal: tty });
    // In a terminal readline reads Ctrl-C as a key (raw mode); a SIGINT from elsewhere acts the same.
    lines.on("SIGINT", onCtrlC);
    process.on("SIGINT", onCtrlC);
    if (tty) {
      lines.setPrompt("> ");
      lines.prompt();
    }
    for await (const line of lines) {
      if (tty) {
        await keys.line(line);
        continue;
      }
      if (line.trim() === "") continue;
      // Not a terminal: each line waits for the turn it started, so a script reads a whole session in order.
      const ended = new Promise<void>((resolve) => (turnEnded = resolve));
      await target.say(line, session);
      await ended;
    }
    if (exitCode === 0 && tty) await keys.leave(0);
    return exitCode;
  } finally {
    process.off("SIGINT", onCtrlC);
    view.close();
    await target.close();
  }
}

/** Register `klbr chat`. */
export function register(program: Command): void {
  program
    .command("chat")
    .description("an interactive session with the model: lines are operator input; its text, cells, results and usage stream in")
    .option("--route <name>", "the route (embedded host only; a daemon uses its own; default: the default route)")
    .option("-s, --session <id>", "the session (default: root)")
    .action(run(async (cmd) => chatCommand(optionsOf(cmd))));
}
