import type { Register } from "../command";
import { register as display } from "./display";
import { register as exec } from "./exec";
import { register as init } from "./init";
import { register as log } from "./log";
import { register as mcp } from "./mcp";
import { register as release } from "./release";
import { register as repl } from "./repl";
import { register as route } from "./route";
import { register as chat } from "./chat";
import { register as say } from "./say";
import { register as serve } from "./serve";
import { register as status } from "./status";
import { register as target } from "./target";
import { register as web } from "./web";

/**
 * Every `klbr` command, in the order `klbr help` lists them. A command is one file in this
 * folder exporting `register(program)` (its options, its help, its action), plus one line here.
 * Keep a command file's top-level imports light: load the host inside the action.
 */
export const COMMANDS: readonly Register[] = [init, serve, exec, say, chat, repl, mcp, route, log, display, release, status, target, web];
