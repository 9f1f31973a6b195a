/**
 * The review queue (platform administrators): skill submissions by status, pending first, each with
 * its description, files and SKILL.md, approved or rejected with notes for the submitter. Anyone else
 * opening the address sees the API's refusal explained.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ApiError, type components, unwrap } from "../api";
import { useSession } from "../session";
import { SubmissionState } from "../ui/content-submission";
import { ErrorNote, Field, Loading, Note, Page } from "../ui/index";

type Submission = components["schemas"]["SkillSubmission"];
type Status = Submission["status"];

export default function Review() {
  const { api } = useSession();
  const [status, setStatus] = useState<Status>("pending");
  const [decided, setDecided] = useState<Submission | null>(null);
  const queue = useQuery({
    queryKey: ["skill-submissions", status],
    queryFn: () => unwrap(api.GET("/v1/skill-submissions", { params: { query: { status } } })),
  });
  const refused = queue.error instanceof ApiError && queue.error.status === 403;

  return (
    <Page title="Review queue">
      {refused ? (
        <>
          <Note kind="warning">
            The review queue is for Toolport's platform administrators, and your account is not one, so the API refused to list
            submissions. Your own submissions and their review status are on the Skills page.
          </Note>
          <ErrorNote error={queue.error} />
        </>
      ) : (
        <>
          <p className="muted">
            Approving a submission publishes the skill to everyone; a decision is final. Notes are shown to the submitter.
          </p>
          <Field label="Show">
            {(p) => (
              <select {...p} value={status} onChange={(e) => setStatus(e.target.value as Status)}>
                <option value="pending">Pending</option>
                <option value="approved">Approved</option>
                <option value="rejected">Rejected</option>
              </select>
            )}
          </Field>
          {decided ? (
            <Note kind="success">
              <strong>{decided.skill_name}</strong> {decided.status}.
            </Note>
          ) : null}
          {queue.isPending ? (
            <Loading what="Loading submissions" />
          ) : queue.error ? (
            <ErrorNote error={queue.error} />
          ) : queue.data.length === 0 ? (
            <p className="muted">No {status} submissions.</p>
          ) : (
            <ul className="cards">
              {queue.data.map((s) => (
                <SubmissionCard key={s.id} submission={s} onDecided={setDecided} />
              ))}
            </ul>
          )}
        </>
      )}
    </Page>
  );
}

function SubmissionCard({ submission: s, onDecided }: { submission: Submission; onDecided(s: Submission): void }) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const [notes, setNotes] = useState("");
  const files = [
    ...s.scripts.map((f) => `scripts/${f.name}`),
    ...s.reference_files.map((f) => `references/${f.name}`),
    ...s.assets.map((f) => `assets/${f.name}`),
  ];

  const review = useMutation({
    mutationFn: (decision: "approve" | "reject") =>
      unwrap(
        api.POST("/v1/skill-submissions/{submission_id}/review", {
          params: { path: { submission_id: s.id } },
          body: { decision, ...(notes.trim() ? { notes: notes.trim() } : {}) },
        }),
      ),
    onSuccess: (decided) => {
      onDecided(decided);
      void queryClient.invalidateQueries({ queryKey: ["skill-submissions"] });
    },
  });

  return (
    <li className="card" data-submission={s.id}>
      <h2>{s.skill_name}</h2>
      <p>{s.skill_description}</p>
      <SubmissionState submission={s} />
      {files.length > 0 ? (
        <p className="muted">Files: {files.map((f, i) => [i > 0 ? ", " : "", <code key={f}>{f}</code>])}</p>
      ) : (
        <p className="muted">No files besides SKILL.md.</p>
      )}
      <details className="content-disclosure">
        <summary>SKILL.md</summary>
        {/* biome-ignore lint/a11y/noNoninteractiveTabindex: scrollable content must be reachable by keyboard */}
        <pre className="content-skill-preview" tabIndex={0}>
          {s.skill_md_content}
        </pre>
      </details>
      {s.reviewer_notes ? (
        <div className="content-notes">
          <span className="muted">Reviewer's notes:</span> {s.reviewer_notes}
        </div>
      ) : null}
      {s.status === "pending" ? (
        <div className="content-review">
          <Field label={`Notes for the submitter of ${s.skill_name}`} hint="Optional; up to 5,000 characters.">
            {(p) => <textarea {...p} rows={3} maxLength={5000} value={notes} onChange={(e) => setNotes(e.target.value)} />}
          </Field>
          <div className="row">
            <button type="button" disabled={review.isPending} onClick={() => review.mutate("approve")}>
              Approve
            </button>
            <button type="button" className="button-danger" disabled={review.isPending} onClick={() => review.mutate("reject")}>
              Reject
            </button>
          </div>
          <ErrorNote error={review.error} />
        </div>
      ) : null}
    </li>
  );
}
