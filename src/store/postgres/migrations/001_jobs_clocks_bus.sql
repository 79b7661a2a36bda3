-- The fixed tables of the PostgreSQL store. Record tables (one per TableSpec) are created
-- from their specs at first use (schema.ts), so they are not listed here.

-- One row per account whose clock was moved: its offset from real time, in ms.
CREATE TABLE clocks (
  account_id text PRIMARY KEY,
  offset_ms double precision NOT NULL
);

-- The scheduler's queue: at most one job per (account, kind, ref); due on the account clock.
-- lease_until/claimed_by: the instance running it and until when (real ms); after that, any
-- instance may claim it again.
CREATE SEQUENCE jobs_seq;
CREATE TABLE jobs (
  account_id text NOT NULL,
  id text NOT NULL,
  kind text NOT NULL,
  ref text NOT NULL,
  due_at double precision NOT NULL,
  seq bigint NOT NULL,
  lease_until double precision,
  claimed_by text,
  PRIMARY KEY (account_id, id),
  UNIQUE (account_id, kind, ref)
);
CREATE INDEX jobs_account_due ON jobs (account_id, due_at, seq);
CREATE INDEX jobs_due ON jobs (due_at);

-- Bus messages too large for a NOTIFY payload (8000 bytes): the notification carries the id.
-- Kept a few minutes so every listening instance can read them, then removed by publishers.
CREATE TABLE bus_payloads (
  account_id text NOT NULL,
  id bigserial NOT NULL,
  message jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, id)
);
CREATE INDEX bus_payloads_created ON bus_payloads (created_at);
