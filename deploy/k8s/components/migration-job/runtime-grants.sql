-- The runtime user's rights in one service's database, when migrations run as another user (this
-- component). Run it in each of toolport_catalog, toolport_execution, toolport_billing, toolport_identity,
-- toolport_content and toolport_webhooks, as the migration user, after the Job's first run created them
-- (psql "$MIGRATION_URL_OF_THAT_DATABASE" -f runtime-grants.sql). toolport_migrate and toolport_app are the
-- two users of README "Migrations"; use your names.
--
-- Rows only: read, insert, update, delete, and the sequences behind generated ids. No CREATE, ALTER, DROP,
-- TRUNCATE or REFERENCES: the migration user owns the schema's objects, and the runtime user can change
-- none of them. (CONNECT on the database and USAGE on schema public are PUBLIC's by default; on a server
-- that revoked them, grant them too.)
GRANT USAGE ON SCHEMA public TO toolport_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO toolport_app;
GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO toolport_app;
-- Tables and sequences later migrations create get the same rights, with no new GRANT per release.
ALTER DEFAULT PRIVILEGES FOR ROLE toolport_migrate IN SCHEMA public
  GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO toolport_app;
ALTER DEFAULT PRIVILEGES FOR ROLE toolport_migrate IN SCHEMA public
  GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO toolport_app;
