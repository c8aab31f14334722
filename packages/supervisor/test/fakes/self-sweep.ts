// A process that carries a tree tag itself (inherited from the test) sweeps that tag: its own
// child goes, the caller stays. Prints what was left and whether the child still runs.
import { spawn } from "node:child_process";
import { killTagged, TREE_ENV } from "../../src/tagged.js";
import { isAlive } from "../../src/tree.js";

const value = process.env[TREE_ENV]!;
const sibling = spawn("sleep", ["1000"], { stdio: "ignore" });
await new Promise((resolve) => sibling.once("spawn", resolve));
const left = await killTagged({ name: TREE_ENV, value });
console.log(JSON.stringify({ left, sibling: sibling.pid, siblingAlive: isAlive(sibling.pid!) }));
process.exit(0);
