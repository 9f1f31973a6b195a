/**
 * Connect a coding assistant: the project's `.mcp.json` from `GET /v1/coding-client/mcp-json` (for the
 * chosen organization), where to save it, and the equivalent `claude mcp add` line. Neither holds a
 * key: both keep the answer's `${...}` placeholder, which each developer exports in their shell.
 */
import { useQuery } from "@tanstack/react-query";
import { Link } from "wouter";
import { type components, unwrap } from "../api";
import { useSession } from "../session";
import { CopyButton, ErrorNote, Loading, Page } from "../ui/index";

type McpJson = components["schemas"]["McpJson"];

/** Quotes a shell word in single quotes, so `${...}` stays a placeholder instead of being expanded. */
const shellQuote = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);

/** The `claude mcp add` line equivalent to the file: same server name, address and headers. */
export function claudeMcpAdd(answer: McpJson): string {
  const [name, server] = Object.entries(answer.mcp_json.mcpServers)[0] ?? ["danube", answer.mcp_json.mcpServers.danube];
  const headers = Object.entries(server.headers as Record<string, string>).map(
    ([header, value]) => `--header ${shellQuote(`${header}: ${value}`)}`,
  );
  return ["claude mcp add --transport http", `--scope ${answer.scope}`, name, shellQuote(server.url), ...headers].join(" ");
}

export default function McpHelper() {
  const { api, orgId } = useSession();
  const answer = useQuery({
    queryKey: ["mcp-json", orgId],
    queryFn: () => unwrap(api.GET("/v1/coding-client/mcp-json", { params: { query: { org_id: orgId } } })),
  });
  return (
    <Page title="Connect an assistant">
      <p className="muted">
        Let a coding assistant (Claude Code or any MCP client) call Toolport's tools through the MCP server.
      </p>
      {answer.isPending ? <Loading what="Loading the configuration" /> : null}
      <ErrorNote error={answer.error} />
      {answer.data ? <Instructions answer={answer.data} /> : null}
    </Page>
  );
}

function Instructions({ answer }: { answer: McpJson }) {
  const json = JSON.stringify(answer.mcp_json, null, 2);
  const command = claudeMcpAdd(answer);
  const placeholder = answer.mcp_json.mcpServers.danube.headers["svc-api-key"];
  const variable = /^\$\{(\w+)\}$/.exec(placeholder)?.[1] ?? "DANUBE_API_KEY";
  return (
    <>
      {answer.org ? (
        <p>
          Calls run in the organization <strong>{answer.org.org_name}</strong> (<code>{answer.org.org_slug}</code>, you are{" "}
          {answer.org.role}).
        </p>
      ) : (
        <p>Calls run in the organization the key belongs to.</p>
      )}
      <section aria-labelledby="mcp-key">
        <h2 id="mcp-key">1. A key in your shell</h2>
        <p>
          <Link href="/keys">Create an API key</Link> for the assistant, then export it in the shell that starts it (the file and
          the command refer to it by this name and never contain it):
        </p>
        <pre data-testid="mcp-export">
          <code>export {variable}=tp_your_key</code>
        </pre>
      </section>
      <section aria-labelledby="mcp-file">
        <h2 id="mcp-file">
          2. Save <code>{answer.file}</code>
        </h2>
        <p>
          Save this as <code>{answer.file}</code> at the root of your project ({answer.scope} scope) and commit it: it holds no
          secret, only the <code>{placeholder}</code> placeholder each developer sets.
        </p>
        <div className="code-block">
          <pre className="wrap">
            <code data-testid="mcp-json">{json}</code>
          </pre>
          <CopyButton text={json} label={`Copy ${answer.file}`} />
        </div>
      </section>
      <section aria-labelledby="mcp-command">
        <h2 id="mcp-command">Or add it with a command</h2>
        <p>The same server, added to the project with Claude Code's command line:</p>
        <div className="code-block">
          <pre className="wrap">
            <code data-testid="mcp-command">{command}</code>
          </pre>
          <CopyButton text={command} label="Copy the command" />
        </div>
      </section>
    </>
  );
}
