// Starts a throwaway PostgreSQL, prints where it is, and waits to be killed (pg-cluster.test.ts).
import { startPostgres } from "../../../test-support/postgres";

const pg = await startPostgres();
process.stdout.write(`${JSON.stringify({ dir: pg.dir, pid: pg.pid() })}\n`);
setInterval(() => {}, 1 << 30);
