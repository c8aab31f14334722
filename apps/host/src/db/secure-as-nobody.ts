// Helper of secure.test.ts: try to secure a data directory (argv) and print the error as JSON.
import { secureDataDir } from "./secure";

try {
  secureDataDir(process.argv[2]!);
  process.stdout.write(JSON.stringify({ code: null }));
} catch (error) {
  process.stdout.write(JSON.stringify({ code: (error as { code?: string }).code, message: (error as Error).message }));
}
