-- OAuth-protected upstream MCP servers (issue 32). The client Toolport registered (or the publisher
-- registered by hand) at an MCP server's authorization server keeps what discovery found that a REST
-- service's client does not have: the resource indicator every authorization and token request carries
-- (RFC 8707), the issuer an authorization response's `iss` must equal (RFC 9207) and whether the server
-- promises to send it, and how the client came to be.
ALTER TABLE oauth_clients
  ADD COLUMN resource text,
  ADD COLUMN issuer text,
  ADD COLUMN iss_supported boolean NOT NULL DEFAULT false,
  ADD COLUMN registration text NOT NULL DEFAULT 'manual' CHECK (registration IN ('manual', 'dcr', 'cimd'));

-- Step-up: scopes an upstream asked a connection for (403 insufficient_scope) that it was not granted.
-- Until the caller connects again (asking for them too), readiness says the connection needs consent.
ALTER TABLE credentials ADD COLUMN oauth_wanted_scopes text[] NOT NULL DEFAULT '{}';
