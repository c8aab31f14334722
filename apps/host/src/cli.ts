/** The `klbr` command line. */
export { buildProgram, exitWhenDrained, main } from "./cli/main";
