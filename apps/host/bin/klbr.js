#!/usr/bin/env node
// First: `klbr serve` takes SIGINT/SIGTERM as a clean stop from this moment on (src/early-stop.ts).
import { armForServe } from "../dist/early-stop.js";

armForServe();
const { exitWhenDrained, main } = await import("../dist/cli.js");

// A reader that closed the pipe early (`klbr log | head`) is not an error of ours.
for (const stream of [process.stdout, process.stderr]) stream.on("error", (error) => {
  if (error.code !== "EPIPE") throw error;
});
await main();
await exitWhenDrained();
