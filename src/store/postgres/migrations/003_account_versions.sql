-- Each account's version, raised in the same commit as any change to its settings (the
-- account, fault rules, limits, autopilot rules, clock): instances keep those in memory and
-- check them against it (src/store/postgres/versions.ts).
CREATE TABLE account_versions (
  account_id text PRIMARY KEY,
  version bigint NOT NULL
);
