import { LiveLines, type LiveOutputEvent } from "./live-output";

/** How one notification of a chat reads: what the model streams, its cells and results, usage, and where a turn ends. */
export class ChatView {
  private spinner: NodeJS.Timeout | null = null;
  private frame = 0;
  private streaming = false;
  /** A running cell's live output (C16), shown line by line under the cell as `│ ` lines. */
  private readonly live = new LiveLines((line) => this.line(`${line.stream === "stderr" ? "│!" : "│ "}${line.text}`));

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly err: NodeJS.WritableStream,
    private readonly tty: boolean,
  ) {}

  /** Render one notification of the chat's session. */
  render(event: Record<string, unknown>): void {
    if (event.type === "message") return this.line(`[to operator] ${String(event.text)}`);
    if (event.type !== "model") return;
    switch (event.phase) {
      case "request":
        return this.spin(`thinking (${String(event.route)})`);
      case "delta":
        if (event.kind !== "text") return;
        this.stopSpin();
        this.streaming = true;
        this.out.write(String(event.text));
        return;
      case "reply":
        this.stopSpin();
        if (this.streaming) this.out.write("\n");
        this.streaming = false;
        return this.line(`  · ${usageLine(event.usage as Record<string, number> | null)}${event.retries ? `, ${String(event.retries)} retries` : ""}`);
      case "cell":
        return this.line(`[cell ${String(event.execution_id)}]\n\`\`\`python\n${String(event.code).replace(/\n$/, "")}\n\`\`\``);
      case "result":
        // Whatever the cell left unfinished on a line was still its output: show it before the record.
        this.live.flush(typeof event.execution_id === "string" ? event.execution_id : undefined);
        return this.line(String(event.text).replace(/\n$/, ""));
      case "refusal":
        return this.line(`[not run] ${String(event.reason)}`);
      case "error":
        this.stopSpin();
        return this.line(`[route error ${String(event.code)}] ${String(event.message)}`);
      case "fold":
        return this.line(`[fold ${String(event.reason)}: frontier ${String(event.frontier_id)} through record ${String(event.covers_through)}; header pinned anew (${String(event.pin_reason)})]`);
      case "turn_end":
        this.stopSpin();
        return this.line(`[turn ended: ${String(event.reason)}]`);
      default:
        return;
    }
  }

  /** A line of the chat itself (a queued message, what Ctrl-C did), on its own line. */
  note(text: string): void {
    this.line(text);
  }

  /** Render one piece of a running cell's live output. */
  output(event: LiveOutputEvent): void {
    this.live.push(event);
  }

  /** Stop the spinner (the chat is closing). */
  close(): void {
    this.live.flush();
    this.stopSpin();
  }

  private line(text: string): void {
    this.stopSpin();
    if (this.streaming) this.out.write("\n");
    this.streaming = false;
    this.out.write(`${text}\n`);
  }

  private spin(label: string): void {
    if (!this.tty || this.spinner) return;
    const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
    this.spinner = setInterval(() => this.err.write(`\r${frames[this.frame++ % frames.length]} ${label}`), 80);
    this.spinner.unref();
  }

  private stopSpin(): void {
    if (!this.spinner) return;
    clearInterval(this.spinner);
    this.spinner = null;
    this.err.write("\r\x1b[K");
  }
}

/** The usage of one request as the route reported it; absent counts stay absent. */
export function usageLine(usage: Record<string, number> | null): string {
  if (!usage) return "usage absent (the route reported none)";
  const parts = [`prompt ${usage.prompt_tokens ?? "?"}`];
  if (usage.cached_prompt_tokens !== undefined) {
    const share = usage.prompt_tokens ? ` (${((100 * usage.cached_prompt_tokens) / usage.prompt_tokens).toFixed(1)}%)` : "";
    parts.push(`cached ${usage.cached_prompt_tokens}${share}`);
  }
  if (usage.cache_write_tokens !== undefined) parts.push(`cache write ${usage.cache_write_tokens}`);
  if (usage.completion_tokens !== undefined) parts.push(`completion ${usage.completion_tokens}`);
  return parts.join(", ");
}
