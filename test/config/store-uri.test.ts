/** The store URI rules, read in one place by the configuration and by openStore alike. */
import { homedir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultStoreUri, parseStoreUri, StoreUriError } from "../../src/config/store-uri.js";
import { LedgerError, openLedger } from "../../src/ledger/open-ledger.js";

function refusal(uri: string): string {
  try {
    parseStoreUri(uri);
  } catch (error) {
    expect(error).toBeInstanceOf(StoreUriError);
    return (error as Error).message;
  }
  throw new Error(`expected ${uri} to be refused`);
}

describe("parseStoreUri", () => {
  it("reads an absolute SQLite path with its busy timeout", () => {
    expect(parseStoreUri("sqlite:///var/lib/x/ledger.sqlite?busyTimeoutMs=250")).toEqual({
      kind: "sqlite",
      path: "/var/lib/x/ledger.sqlite",
      busyTimeoutMs: 250,
      durability: "strict",
    });
  });

  it("puts sqlite://~/ under the home directory", () => {
    const location = parseStoreUri("sqlite://~/ledgers/a.sqlite");
    expect(location).toMatchObject({ kind: "sqlite", path: join(homedir(), "ledgers", "a.sqlite") });
  });

  it("accepts the default it gives", () => {
    expect(parseStoreUri(defaultStoreUri()).kind).toBe("sqlite");
  });

  it("reads PostgreSQL and Redis URIs and keeps durability from the driver", () => {
    expect(parseStoreUri("postgresql://u:p@db:5432/ledger?sslmode=require&durability=relaxed")).toEqual({
      kind: "postgres",
      scheme: "postgresql",
      connection: "postgresql://u:p@db:5432/ledger?sslmode=require",
      durability: "relaxed",
    });
    expect(parseStoreUri("postgres:///ledger?host=/run/postgresql")).toMatchObject({ kind: "postgres" });
    const redis = parseStoreUri("rediss://:pw@cache.example:6380/2");
    expect(redis).toEqual({
      kind: "redis",
      scheme: "rediss",
      connection: "rediss://:pw@cache.example:6380/2",
      durability: "strict",
    });
  });

  it.each([
    ["/var/ledger.sqlite", /^expected a store URI/],
    ["sqlite://ledger.sqlite", /absolute SQLite path/],
    ["sqlite://", /needs a file path/],
    ["sqlite://:memory:", /would not survive a restart/],
    ["sqlite:///x?busyTimeoutMs=-1", /busyTimeoutMs: -1 is below 0; expected an integer from 0 to 600000/],
    ["sqlite:///x?busyTimeoutMs=2.5", /busyTimeoutMs: 2\.5 is not a whole number/],
    [
      "sqlite:///x?busyTimeoutMs=soon",
      /busyTimeoutMs: expected an integer from 0 to 600000 \(value not shown\)/,
    ],
    ["sqlite:///x?busyTimeoutMs=600001", /busyTimeoutMs/],
    ["sqlite:///x?journal=off", /only the query parameters busyTimeoutMs, durability and driver/],
    ["redis://:pw@cache/0?durability=sometimes", /durability must be 'strict' or 'relaxed'/],
    ["mysql://u:hunter2@db/x", /^unsupported store mysql:\/\/; expected one of sqlite:\/\/, postgres:\/\//],
    ["mongodb+srv://u:hunter2@db/x", /unsupported store mongodb\+srv:\/\//],
    ["valkey://h", /unsupported store valkey/],
    ["redis://:hunter2@/0", /redis:\/\/ (needs a host|URI is malformed)/],
    ["postgres://u:hunter2@db:99999/x", /postgres:\/\/ URI is malformed/],
  ])("refuses %s, saying what is expected and nothing of the URI", (uri, pattern) => {
    const message = refusal(uri);
    expect(message).toMatch(pattern);
    expect(message).not.toContain("hunter2");
    expect(message).not.toContain("\n");
  });

  it("does not name a scheme long enough to be a pasted secret", () => {
    const message = refusal(`${"a".repeat(40)}://x`);
    expect(message).not.toContain("aaaaaaaaaaaaaaaaa");
  });

  it("is what openStore applies: a scheme the configuration refuses, the ledger refuses too", async () => {
    const refused = await openLedger({ storeUri: "mysql://u:hunter2@db/x" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LedgerError);
    expect((refused as LedgerError).code).toBe("LEDGER_CONFIG");
    expect((refused as Error).message).toMatch(/unsupported store mysql:\/\//);
    await expect(openLedger({ storeUri: "sqlite://relative.sqlite" })).rejects.toThrow(/absolute/);
  });
});
