/**
 * The apps a person connected through OAuth (an MCP client allowed on the consent page), beside the API
 * keys: each grant is an API key of the person's (`oauth_client_id` set), so it is listed with what a key
 * shows (organization, permissions, created, last used, its usage page) and revoked like one
 * (`DELETE /v1/api-keys/{key_id}`), which stops the client's next request. Every organization's grants
 * are listed, each naming its organization: the question "which apps can act for me" has one answer.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link } from "wouter";
import { type components, unwrap } from "../api";
import { useSession } from "../session";
import { Badge, ErrorNote, Loading, When } from "./index";
import { KeyActions } from "./key-actions";
import { isExpired, permissionSummary } from "./keys-permissions";

type Grant = components["schemas"]["OAuthGrant"];

/** A client id as a person recognises it: the host of a metadata document's URL, else the id itself. */
export function clientHost(clientId: string): string {
  try {
    const url = new URL(clientId);
    return url.protocol === "https:" ? url.host : clientId;
  } catch {
    return clientId;
  }
}

export function OAuthGrants({ showRevoked }: { showRevoked: boolean }) {
  const { api } = useSession();
  const grants = useQuery({
    queryKey: ["oauth-grants", showRevoked],
    queryFn: () => unwrap(api.GET("/v1/oauth/grants", { params: { query: showRevoked ? { include_revoked: true } : {} } })),
  });
  return (
    <section aria-labelledby="oauth-grant-list">
      <h2 id="oauth-grant-list">Apps connected through OAuth</h2>
      <p className="muted">
        Assistants you allowed to use Toolport's MCP server for you, on the page they sent you to. Each acts as a key of yours
        with the permissions you chose; revoking it stops the app at its next request.
      </p>
      {grants.isPending ? <Loading what="Loading the connected apps" /> : null}
      <ErrorNote error={grants.error} />
      {grants.data && grants.data.length === 0 ? <p className="muted">No app is connected through OAuth.</p> : null}
      {grants.data && grants.data.length > 0 ? (
        <ul className="cards key-list">
          {grants.data.map((g) => (
            <GrantCard key={g.key.id} grant={g} />
          ))}
        </ul>
      ) : null}
    </section>
  );
}

function GrantCard({ grant }: { grant: Grant }) {
  const { api, organizations } = useSession();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const key = grant.key;
  const revoke = useMutation({
    mutationFn: () => unwrap(api.DELETE("/v1/api-keys/{key_id}", { params: { path: { key_id: key.id } } })),
    onSuccess: () => {
      setConfirming(false);
      return Promise.all([
        queryClient.invalidateQueries({ queryKey: ["oauth-grants"] }),
        queryClient.invalidateQueries({ queryKey: ["api-keys"] }),
      ]);
    },
  });
  const organization = organizations.find((o) => o.id === key.organization_id);
  const expired = isExpired(key);
  const headingId = `grant-${key.id}`;
  return (
    <li className="card" aria-labelledby={headingId} data-testid="oauth-grant">
      <div className="key-head">
        <h3 id={headingId}>
          <Link href={`/keys/${key.id}`}>{grant.client_name}</Link>
        </h3>
        <Badge value="oauth" label="OAuth" />
        {key.revoked_at ? <Badge value="revoked" /> : expired ? <Badge value="expired" /> : null}
      </div>
      <dl className="key-facts">
        <div>
          <dt>Client</dt>
          <dd>
            <code title={grant.client_id}>{clientHost(grant.client_id)}</code>
          </dd>
        </div>
        <div>
          <dt>Organization</dt>
          <dd>{organization ? organization.name : <code>{key.organization_id}</code>}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            <When at={key.created_at} />
          </dd>
        </div>
        <div>
          <dt>Last used</dt>
          <dd>
            <When at={key.last_used} />
          </dd>
        </div>
        {key.revoked_at ? (
          <div>
            <dt>Revoked</dt>
            <dd>
              <When at={key.revoked_at} />
            </dd>
          </div>
        ) : null}
        <div className="key-permissions">
          <dt>Permissions</dt>
          <dd>{permissionSummary(key.permissions)}</dd>
        </div>
      </dl>
      {key.revoked_at ? null : (
        <KeyActions
          keyId={key.id}
          label={grant.client_name}
          expired={expired}
          confirming={confirming}
          setConfirming={setConfirming}
          revoke={revoke}
        />
      )}
      <ErrorNote error={revoke.error} />
    </li>
  );
}
