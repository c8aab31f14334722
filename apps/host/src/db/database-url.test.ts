import { describe, expect, test } from "vitest";
import { databaseChoice, redactUrl } from "./database-url";

describe("databaseChoice (klbr serve --database, KLBR_DATABASE_URL)", () => {
  test("nothing given, or an empty variable: SQLite in the data directory", () => {
    expect(databaseChoice(undefined, {})).toEqual({ kind: "sqlite" });
    expect(databaseChoice(undefined, { KLBR_DATABASE_URL: "" })).toEqual({ kind: "sqlite" });
  });

  test.each([
    ["postgres://klbr@db.example:5432/klbr", "postgres://klbr@db.example:5432/klbr"],
    ["postgresql://u:secret@10.0.0.5/log", "postgresql://u:***@10.0.0.5/log"],
    ["postgres://klbr@/klbr?host=/run/postgresql", "postgres://klbr@/klbr?host=/run/postgresql"],
    ["postgresql:///klbr?host=/run/postgresql", "postgresql:///klbr?host=/run/postgresql"],
    ["  postgres://u:pw@h/klbr  ", "postgres://u:***@h/klbr"],
    ["postgres://klbr@localhost/klbr?host=%2Ftmp%2Fpg", "postgres://klbr@localhost/klbr?host=%2Ftmp%2Fpg"],
  ])("%s is PostgreSQL, shown as %s", (text, shown) => {
    expect(databaseChoice(text, {})).toEqual({ kind: "postgres", url: text.trim(), shown });
  });

  test("the option wins over the variable; the variable is read when the option is absent", () => {
    expect(databaseChoice("postgres://a@h/one", { KLBR_DATABASE_URL: "postgres://a@h/two" })).toMatchObject({ url: "postgres://a@h/one" });
    expect(databaseChoice(undefined, { KLBR_DATABASE_URL: "postgres://a@h/two" })).toMatchObject({ url: "postgres://a@h/two" });
  });

  test.each([
    ["", "--database", "is not a URL"],
    ["not a url", "--database", "is not a URL"],
    ["mysql://u@h/db", "--database", "is a mysql URL; only PostgreSQL"],
    ["sqlite:///tmp/x.sqlite", "--database", "is a sqlite URL"],
    ["postgres://u@h", "--database", "names no database"],
    ["postgres://u@h/", "--database", "names no database"],
    ["postgres://u@h/a/b", "--database", "names no database"],
    ["postgres://u@/db?host=relative/dir", "--database", "a socket directory is an absolute path"],
  ])("%j is DATABASE_URL_INVALID naming %s and why", (text, from, why) => {
    let error: unknown;
    try {
      databaseChoice(text, {});
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: "DATABASE_URL_INVALID" });
    expect((error as Error).message).toContain(from);
    expect((error as Error).message).toContain(why);
  });

  test("a bad URL from the variable names the variable, and never shows a password", () => {
    const run = () => databaseChoice(undefined, { KLBR_DATABASE_URL: "mysql://root:hunter2@h/db" });
    expect(run).toThrow(/^KLBR_DATABASE_URL "mysql:\/\/root:\*\*\*@h\/db" is a mysql URL/);
  });

  test("redactUrl hides only the password", () => {
    expect(redactUrl(new URL("postgres://u:p%40ss@h:1/db?sslmode=require"))).toBe("postgres://u:***@h:1/db?sslmode=require");
    expect(redactUrl(new URL("postgres://u@h/db"))).toBe("postgres://u@h/db");
  });
});
