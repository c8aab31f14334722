import { defineConfig } from "drizzle-kit";

// PostgreSQL (C21): its own migrations folder, generated from pg-schema.ts (and the epoch store of
// pg-schema-activation.ts) beside the SQLite one.
export default defineConfig({
  dialect: "postgresql",
  schema: ["./src/db/pg-schema.ts", "./src/db/pg-schema-activation.ts"],
  out: "./drizzle-pg",
  migrations: { table: "__klbr_host_migrations", schema: "public" },
});
