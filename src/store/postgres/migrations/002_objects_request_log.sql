-- Product images and the request log, shared by every instance (contract v3, Shared store).

-- Image bytes, keyed by their account and key. Keys are random (img_<uuid>.<ext>) and
-- served at a public URL that names no account, hence the global unique key (what Citus
-- would need instead: docs/store.md).
CREATE TABLE objects (
  account_id text NOT NULL,
  key text NOT NULL,
  content_type text NOT NULL,
  bytes bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, key)
);
CREATE UNIQUE INDEX objects_key ON objects (key);

-- The request log: newest entries per account (a reserved account id for requests that
-- failed authentication), bounded in count and bytes by the instances that append.
-- `entry` is the entry as GET /_sandbox/requests shows it; `bytes` its JSON size.
CREATE TABLE request_log (
  account_id text NOT NULL,
  seq bigserial NOT NULL,
  trace_id text NOT NULL,
  path text NOT NULL,
  status integer,
  at text NOT NULL,
  bytes integer NOT NULL,
  entry jsonb NOT NULL,
  PRIMARY KEY (account_id, seq)
);
CREATE INDEX request_log_trace ON request_log (account_id, trace_id);
