import type { components } from "../api";
import { Badge, When } from "./index";

/** A skill submission's status badge and when it was submitted and reviewed (skills and review queue). */
export function SubmissionState({ submission: s }: { submission: components["schemas"]["SkillSubmission"] }) {
  return (
    <div className="row">
      <Badge value={s.status} />
      <span className="muted">
        submitted <When at={s.submitted_at} />
        {s.reviewed_at ? (
          <>
            , reviewed <When at={s.reviewed_at} />
          </>
        ) : null}
      </span>
    </div>
  );
}
