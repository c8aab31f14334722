import { packageBuild } from "../../tsup.config.base";

// Splitting keeps each CLI command in its own chunk, so a command loads only what it uses.
export default packageBuild(["src/index.ts", "src/cli.ts"], { splitting: true });
