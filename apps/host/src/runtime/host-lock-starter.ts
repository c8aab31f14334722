// Helper of host-lock.test.ts: one starter process. Prints "ready", takes the lock on "go", prints
// "won" or "lost:<code>", and holds what it won until its stdin ends.
import { createInterface } from "node:readline";
import { acquireHostLock } from "./host-lock";

const rl = createInterface({ input: process.stdin });
process.stdout.write("ready\n");
let release: (() => void) | null = null;
rl.on("line", (line) => {
  if (line !== "go") return;
  try {
    release = acquireHostLock(process.argv[2]!);
    process.stdout.write("won\n");
  } catch (error) {
    process.stdout.write(`lost:${(error as { code?: string }).code ?? "?"}\n`);
  }
});
rl.on("close", () => release?.());
