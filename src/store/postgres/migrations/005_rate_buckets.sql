-- Rate limits' token buckets shared by every instance (src/ratelimit): one row per account (or,
-- for requests that name none, the admin token or a client address) and class. Instances lease
-- tokens in batches through sandbox_rate_lease, one statement each, so that most requests cost
-- no round trip; the row is refilled on the database's clock, which every instance shares.
CREATE TABLE rate_buckets (
  account_id text NOT NULL,
  bucket text NOT NULL,
  tokens double precision NOT NULL,
  at timestamptz NOT NULL,
  PRIMARY KEY (account_id, bucket)
);

CREATE FUNCTION sandbox_rate_lease(p_key text, p_bucket text, p_rate double precision, p_burst double precision, p_want integer,
                                   OUT granted integer, OUT remaining double precision, OUT wait_ms double precision)
LANGUAGE plpgsql AS $$
DECLARE
  have double precision;
  last timestamptz;
  now_at timestamptz;
BEGIN
  INSERT INTO rate_buckets (account_id, bucket, tokens, at) VALUES (p_key, p_bucket, p_burst, clock_timestamp())
    ON CONFLICT (account_id, bucket) DO NOTHING;
  SELECT tokens, at INTO have, last FROM rate_buckets WHERE account_id = p_key AND bucket = p_bucket FOR UPDATE;
  -- Read after the row lock: a lease that waited for another is refilled for the time it waited.
  now_at := clock_timestamp();
  have := LEAST(p_burst, have + GREATEST(0, EXTRACT(EPOCH FROM (now_at - last))) * p_rate);
  granted := LEAST(p_want, FLOOR(have))::integer;
  remaining := have - granted;
  UPDATE rate_buckets SET tokens = remaining, at = GREATEST(now_at, last) WHERE account_id = p_key AND bucket = p_bucket;
  wait_ms := CASE WHEN granted > 0 THEN 0 ELSE (LEAST(p_want, p_burst) - remaining) * 1000 / p_rate END;
END
$$;
