/**
 * A call's stored result, read by its handle (`GET /v1/tools/executions/{execution_id}/result`) when the
 * person opens it from the activity log: the status, the error of a failed call, the JSON of a successful one.
 */
import { useQuery } from "@tanstack/react-query";
import { unwrap } from "../api";
import { useSession } from "../session";
import { ErrorNote, Loading } from "./index";

export function StoredResult({ executionId }: { executionId: string }) {
  const { api } = useSession();
  const result = useQuery({
    queryKey: ["execution-result", executionId],
    queryFn: () =>
      unwrap(api.GET("/v1/tools/executions/{execution_id}/result", { params: { path: { execution_id: executionId } } })),
  });
  if (result.isPending) return <Loading what="Reading the stored result" />;
  if (result.error) return <ErrorNote error={result.error} />;
  const r = result.data as { status?: string; error?: string | null; result?: unknown };
  return (
    <div className="activity-result" data-testid="activity-result">
      <p>
        Stored result of <code>{executionId}</code>: {r.status ?? "unknown"}
        {r.error ? `: ${r.error}` : ""}
      </p>
      {r.result !== null && r.result !== undefined ? <pre className="json">{JSON.stringify(r.result, null, 2)}</pre> : null}
    </div>
  );
}
