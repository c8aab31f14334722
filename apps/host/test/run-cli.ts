// Runs the CLI from source (tests must not need dist/): node --conditions=@klbr/source --import tsx test/run-cli.ts ...
// As bin/klbr.js does: serve's stop signals are armed before the rest of the CLI is loaded.
import { armForServe } from "../src/early-stop";

armForServe();
const { exitWhenDrained, main } = await import("../src/cli/main");

for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
  });
}
await main();
await exitWhenDrained();
