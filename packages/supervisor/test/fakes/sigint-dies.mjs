// A worker that ignores `interrupt` messages and has no SIGINT handler: the ladder's SIGINT
// (rung 2) kills it, as it kills a Python worker whose cell restored SIGINT's default action.
import { hello, open, send } from "./lib.mjs";

const socket = open(() => undefined);
send(socket, hello());
