-- The request log's entries as text, as written: PostgreSQL neither builds a jsonb tree of
-- every entry (kilobytes each: response bodies with QR codes) nor checks its syntax, which
-- cost more database time than a purchase's own statements. Text also keeps U+0000.
-- Entries over 2 kB are compressed: with lz4 where the server has it (a third of pglz's cost).
ALTER TABLE request_log ALTER COLUMN entry TYPE text USING entry::text;
DO $$
BEGIN
  EXECUTE 'ALTER TABLE request_log ALTER COLUMN entry SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported OR syntax_error THEN
  NULL; -- a server built without lz4 (or older than 14) keeps pglz
END
$$;
