import { packageBuild } from "../../tsup.config.base";

export default packageBuild();
