import { fileURLToPath } from "node:url";

/** The drizzle migrations folder of this package (SQL + meta), for hosts that run every package's migrations. */
export const activationMigrationsFolder: string = fileURLToPath(new URL("../drizzle", import.meta.url));

/** The migrations table this package's migrations are recorded in, apart from other packages'. */
export const ACTIVATION_MIGRATIONS_TABLE = "__klbr_activation_migrations";
