// Helper of unreadable.test.ts: index two roots (argv) and print the index as JSON.
import { indexSkills } from "../src/index";

const [builtinDir, managedDir] = process.argv.slice(2);
process.stdout.write(JSON.stringify(await indexSkills({ builtinDir: builtinDir!, managedDir: managedDir! })));
