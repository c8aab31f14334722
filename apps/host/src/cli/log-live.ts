// `klbr log --follow`'s live lines: the output of running cells as the daemon streams it (C16),
// marked as live because the durable log holds none of it (the cell's record comes when it ends).
import { stampOrUnknown } from "@klbr/transcript";
import type { CommonOptions } from "./command";
import { LiveLines, type LiveLine } from "./live-output";
import { connectDaemon } from "./target";

/** What to show and how. */
export interface LiveFollowOptions {
  session?: string;
  execution?: string;
  json?: boolean;
  out: NodeJS.WritableStream;
}

/** A running follow: `flush` writes an execution's unfinished line (its record arrived); `close` ends it. */
export interface LiveFollow {
  flush(executionId: string): void;
  close(): void;
}

/** The human form of one live line: `<time> live <execution> stdout| text`. */
export function liveLine(line: LiveLine, atMs: number): string {
  return `${stampOrUnknown(atMs)} live ${line.execution_id} session=${line.session_id} ${line.stream}| ${line.text}`;
}

/** Follow live output when a daemon runs and streams it; null otherwise (the log alone is shown). */
export async function followLive(opts: CommonOptions, follow: LiveFollowOptions): Promise<LiveFollow | null> {
  const client = await connectDaemon(opts);
  if (!client) return null;
  const lines = new LiveLines((line) => {
    if (follow.execution !== undefined && line.execution_id !== follow.execution) return;
    follow.out.write(`${follow.json ? JSON.stringify({ kind: "output", live: true, at_ms: Date.now(), ...line }) : liveLine(line, Date.now())}\n`);
  });
  try {
    const streams = await client.watchOutput(follow.session ? { session: follow.session } : {}, (event) => {
      if ((event as { type?: unknown }).type === "output") lines.push(event as Parameters<LiveLines["push"]>[0]);
    });
    if (!streams) {
      client.close();
      return null;
    }
  } catch {
    client.close();
    return null; // a daemon older than live output refuses watch_output: the log alone is shown
  }
  return {
    flush: (executionId) => lines.flush(executionId),
    close: () => {
      lines.flush();
      client.close();
    },
  };
}
