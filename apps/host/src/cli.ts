/** The `klbr` command line. */
export { buildProgram, main } from "./cli/main";
