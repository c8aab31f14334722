#!/usr/bin/env node
import { exitWhenDrained, main } from "../dist/cli.js";

// A reader that closed the pipe early (`klbr log | head`) is not an error of ours.
for (const stream of [process.stdout, process.stderr]) stream.on("error", (error) => {
  if (error.code !== "EPIPE") throw error;
});
await main();
await exitWhenDrained();
