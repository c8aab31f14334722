/**
 * Exit statuses of `klbr` (sysexits where one fits). "Nothing ran" has its own status, apart
 * from "the cell raised" (1), so a script can retry it without fearing a second effect.
 */
export const EXIT = {
  OK: 0,
  /** The cell raised (its traceback is on stderr). */
  CELL_ERROR: 1,
  /** EX_USAGE: a bad command line (commander's own errors included). */
  USAGE: 64,
  /** EX_DATAERR: an input file or draft was refused, or a name given (a target, a display digest) names nothing (nothing was written). */
  DATA: 65,
  /** EX_UNAVAILABLE: this machine cannot run it (the Python interpreter, the data directory or database). */
  UNAVAILABLE: 69,
  /** EX_SOFTWARE: the worker failed under the cell, or klbr itself failed. */
  SOFTWARE: 70,
  /** EX_TEMPFAIL: nothing ran (no daemon, the data directory busy, a cell refused before it ran); try again. */
  NOTHING_RAN: 75,
  /** Interrupted, as after SIGINT. */
  INTERRUPTED: 130,
} as const;

/** The table `klbr --help` and the README print. */
export const EXIT_HELP = `
Exit status:
  0    ok (a cell that yielded included)
  1    the cell raised
  64   usage error (EX_USAGE)
  65   an input was refused: a file, a draft, a target or display digest that names nothing (EX_DATAERR)
  69   cannot run here: Python interpreter, data directory or database unusable (EX_UNAVAILABLE)
  70   the worker failed under the cell, or klbr failed (EX_SOFTWARE)
  75   nothing ran: no daemon, the data directory busy, the cell refused before running (EX_TEMPFAIL)
  130  the cell was interrupted
`;
