-- An authorization request belongs to the first signed-in person who opens it on the consent page
-- (domain/oauth-server.ts): anyone else holding its id then finds nothing, as for a missing request.
ALTER TABLE oauth_authorization_requests ADD COLUMN viewer_id uuid REFERENCES accounts (id);
