/**
 * Workflows: the person's workflows (ordered chains of tool calls), each linking to its page, where it
 * is edited, run and its runs are listed; and the way to a new one.
 */
import { useQuery } from "@tanstack/react-query";
import { Plus, Workflow } from "lucide-react";
import { Link } from "wouter";
import { unwrap } from "../api";
import { useSession } from "../session";
import { Badge, EmptyState, ErrorNote, Loading, Page, TableWrap, When } from "../ui/index";

export default function Workflows() {
  const { api } = useSession();
  const list = useQuery({
    queryKey: ["workflows-my"],
    queryFn: () => unwrap(api.GET("/v1/workflows/my", { params: { query: { limit: 100 } } })),
  });

  return (
    <Page
      title="Workflows"
      actions={
        <Link href="/workflows/new" className="button">
          <Plus className="icon" size={16} aria-hidden="true" />
          New workflow
        </Link>
      }
    >
      <p className="muted">
        A workflow calls tools one after another; a step's input can use the run's inputs (<code>{"{{inputs.<field>}}"}</code>)
        and an earlier step's result (<code>{"{{steps.<N>.result.<field>}}"}</code>).
      </p>
      {list.isPending ? (
        <Loading what="Loading workflows" />
      ) : list.error ? (
        <ErrorNote error={list.error} />
      ) : list.data.length === 0 ? (
        <EmptyState
          icon={Workflow}
          title="No workflows yet."
          action={
            <Link href="/workflows/new" className="button button-secondary">
              Create one
            </Link>
          }
        >
          Chain tools into one call: each step can use the run's inputs and an earlier step's result.
        </EmptyState>
      ) : (
        <TableWrap label="Your workflows">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Steps</th>
                <th scope="col">Visibility</th>
                <th scope="col">Runs</th>
                <th scope="col">Success rate</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((w) => (
                <tr key={w.id}>
                  <td>
                    <Link href={`/workflows/${w.id}`}>{w.name}</Link>
                    {w.description ? <div className="muted">{w.description}</div> : null}
                  </td>
                  <td>{w.step_count}</td>
                  <td>
                    <Badge value={w.visibility} />
                  </td>
                  <td>{w.total_executions}</td>
                  <td>{w.total_executions > 0 ? `${w.success_rate.toFixed(1)}%` : <span className="muted">none yet</span>}</td>
                  <td>
                    <When at={w.created_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </Page>
  );
}
