// Runs the CLI from source (tests must not need dist/): node --conditions=@klbr/source --import tsx test/run-cli.ts ...
import { main } from "../src/cli/main";

await main();
process.exit(process.exitCode ?? 0);
