-- Content, part 1: skills (Agent Skills bundles), their submissions for public release, and site records
-- with the crawl jobs that fill them. Workflows come in a later migration.

CREATE TABLE skills (
  id uuid PRIMARY KEY,
  owner_id uuid NOT NULL,
  name text NOT NULL,
  description text NOT NULL,
  license text,
  compatibility text,
  metadata jsonb,
  skill_md text NOT NULL,
  -- [{name, content}] each
  scripts jsonb NOT NULL DEFAULT '[]',
  reference_files jsonb NOT NULL DEFAULT '[]',
  assets jsonb NOT NULL DEFAULT '[]',
  visibility text NOT NULL CHECK (visibility IN ('private', 'public')),
  service_id text,
  -- For a public skill, the submission that published it.
  submission_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- A name is unique per owner and visibility: approving a new submission of a published name replaces
-- that public skill's content (a new version) rather than adding a second one.
CREATE UNIQUE INDEX skills_name ON skills (owner_id, visibility, name);
CREATE INDEX skills_by_owner ON skills (owner_id, created_at DESC);
CREATE INDEX skills_public ON skills (created_at DESC) WHERE visibility = 'public';

CREATE TABLE skill_submissions (
  id uuid PRIMARY KEY,
  submitter_id uuid NOT NULL,
  -- The private skill it was made from, when submitted from one.
  source_skill_id uuid,
  skill_name text NOT NULL,
  skill_description text NOT NULL,
  license text,
  compatibility text,
  metadata jsonb,
  skill_md_content text NOT NULL,
  scripts jsonb NOT NULL DEFAULT '[]',
  reference_files jsonb NOT NULL DEFAULT '[]',
  assets jsonb NOT NULL DEFAULT '[]',
  service_id text,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
  submitted_at timestamptz NOT NULL DEFAULT now(),
  reviewed_at timestamptz,
  reviewer_id uuid,
  reviewer_notes text,
  skill_id uuid
);
CREATE INDEX skill_submissions_by_submitter ON skill_submissions (submitter_id, submitted_at DESC);
CREATE INDEX skill_submissions_queue ON skill_submissions (status, submitted_at);

CREATE TABLE sites (
  id uuid PRIMARY KEY,
  owner_id uuid NOT NULL,
  domain text NOT NULL,
  url text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'crawling', 'live', 'failed')),
  visibility text NOT NULL CHECK (visibility IN ('private', 'public')),
  page_title text NOT NULL DEFAULT '',
  page_description text NOT NULL DEFAULT '',
  components jsonb NOT NULL DEFAULT '{}',
  discovered_tools jsonb NOT NULL DEFAULT '[]',
  category text NOT NULL DEFAULT '',
  tags text[] NOT NULL DEFAULT '{}',
  -- The last crawl's error: a failed record's reason, or a live record's failed recrawl.
  error text,
  crawled_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sites_by_owner ON sites (owner_id, created_at DESC);
CREATE INDEX sites_by_domain ON sites (domain, crawled_at DESC) WHERE status = 'live' AND visibility = 'public';

-- The crawl queue: one job per requested crawl, claimed with FOR UPDATE SKIP LOCKED and a lease, so a
-- restart (or a crashed replica) loses nothing: a job whose lease ran out is taken up again.
CREATE TABLE crawl_jobs (
  id uuid PRIMARY KEY,
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'done')),
  attempts integer NOT NULL DEFAULT 0,
  locked_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX crawl_jobs_queued ON crawl_jobs (created_at) WHERE status = 'queued';

CREATE FUNCTION content_notify_crawl() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('toolport_crawl', '');
  RETURN NULL;
END
$$;
CREATE TRIGGER crawl_jobs_added AFTER INSERT ON crawl_jobs FOR EACH STATEMENT EXECUTE FUNCTION content_notify_crawl();
