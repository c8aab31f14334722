import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

/**
 * argv to run a TypeScript helper in a plain node process (tsx's loader, the @klbr/source
 * condition): one process, so its pid is the one that holds what it takes and a kill -9 hits it.
 */
export function tsNode(script: string, ...args: string[]): { file: string; args: string[] } {
  const loader = pathToFileURL(createRequire(import.meta.url).resolve("tsx", { paths: [new URL("../../..", import.meta.url).pathname] })).href;
  return { file: process.execPath, args: ["--import", loader, "--conditions=@klbr/source", script, ...args] };
}
