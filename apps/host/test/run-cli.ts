// Runs the CLI from source (tests must not need dist/): node --conditions=@klbr/source --import tsx test/run-cli.ts ...
import { exitWhenDrained, main } from "../src/cli/main";

for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
  });
}
await main();
await exitWhenDrained();
