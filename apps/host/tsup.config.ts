import { packageBuild } from "../../tsup.config.base";

export default packageBuild(["src/index.ts", "src/cli.ts"]);
