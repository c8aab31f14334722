import { startRunPostgres } from "../../../test-support/postgres";

/** One throwaway PostgreSQL for the run (C21 tests); each test file makes its own database in it. */
export default startRunPostgres;
