#!/usr/bin/env node
import { main } from "../dist/cli.js";

await main();
// Every command closes what it opened; exiting here only guards against a stray handle keeping a finished command alive.
process.exit(process.exitCode ?? 0);
