import { open } from "./lib.mjs";
open();
