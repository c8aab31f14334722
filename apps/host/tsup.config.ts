import { packageBuild } from "../../tsup.config.base";

// Splitting keeps each CLI command in its own chunk, so a command loads only what it uses.
// early-stop is its own entry: the binary arms serve's stop signals before it loads the CLI.
export default packageBuild(["src/index.ts", "src/cli.ts", "src/early-stop.ts"], { splitting: true });
