import { defineConfig } from "drizzle-kit";

// `pnpm db:generate` writes SQL + meta into drizzle/; both are committed and shipped with the package.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/schema.ts",
  out: "./drizzle",
});
