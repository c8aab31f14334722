import { describe, expect, test } from "vitest";
import { ChatKeys } from "./chat-keys";

function world(stopping = true) {
  const seen: string[] = [];
  let now = 0;
  let left: number | null = null;
  const keys = new ChatKeys(
    {
      stopTurn: async () => (seen.push("stop"), stopping),
      say: async (text) => void seen.push(`say ${text}`),
      note: (text) => void seen.push(`note ${text}`),
      prompt: () => void seen.push("prompt"),
      leave: (code) => void (left = code),
    },
    () => now,
  );
  return { keys, seen, advance: (ms: number) => (now += ms), left: () => left };
}

describe("chat keys (issue 19 item 13)", () => {
  test("Ctrl-C during a turn stops it and the chat stays; a line typed meanwhile is queued and sent when the turn ends", async () => {
    const w = world();
    await w.keys.line("first");
    w.keys.turnStarted();
    await w.keys.line("second");
    await w.keys.ctrlC();
    expect(w.left()).toBeNull();
    await w.keys.turnEnded();
    expect(w.seen).toEqual(["say first", "note [queued] second", "prompt", "stop", "note [stopping the turn; Ctrl-C again within 2 s leaves]", "say second", "prompt"]);
  });

  test("a second Ctrl-C within 2 s leaves with 130; one later only stops again", async () => {
    const w = world();
    w.keys.turnStarted();
    await w.keys.ctrlC();
    w.advance(2001);
    await w.keys.ctrlC();
    expect(w.left()).toBeNull();
    w.advance(1999);
    await w.keys.ctrlC();
    expect(w.left()).toBe(130);
  });

  test("a line typed after a Ctrl-C makes the next Ctrl-C a first one again: it stops the new turn", async () => {
    const w = world();
    w.keys.turnStarted();
    await w.keys.ctrlC();
    await w.keys.turnEnded();
    await w.keys.line("next");
    w.keys.turnStarted();
    await w.keys.ctrlC();
    expect(w.left()).toBeNull();
    expect(w.seen.filter((s) => s === "stop")).toHaveLength(2);
  });

  test("Ctrl-C with no turn running says how to leave; leaving sends what is still queued", async () => {
    const w = world(false);
    await w.keys.ctrlC();
    expect(w.seen).toEqual(["note (Ctrl-C again within 2 s, or Ctrl-D, leaves)", "prompt"]);
    w.keys.turnStarted();
    await w.keys.line("later");
    await w.keys.leave(0);
    expect(w.seen.slice(-2)).toEqual(["say later", "note [sent 1 queued line to the session]"]);
    expect(w.left()).toBe(0);
  });
});
