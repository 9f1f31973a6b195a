/**
 * Skills: create one from a SKILL.md (pasted or chosen as a file) with a live check of its frontmatter
 * as the content service reads it (services/content/src/skills: the `---` block parsed as YAML 1.2, a
 * `description` of 1-1024 characters, a name of lowercase letters, digits and single hyphens, 1-64,
 * the frontmatter's `name` equal to the skill's); the person's skills, each submittable for public
 * release or deletable; and the person's submissions with their review status and notes.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Plus, Sparkles } from "lucide-react";
import { type FormEvent, useCallback, useDeferredValue, useMemo, useRef, useState } from "react";
import { parseDocument } from "yaml";
import { type components, unwrap } from "../api";
import { useSession } from "../session";
import { ConfirmAction } from "../ui/content-confirm";
import { SubmissionState } from "../ui/content-submission";
import { Drawer } from "../ui/dialog";
import { Badge, EmptyState, ErrorNote, Field, Loading, Note, Page, When } from "../ui/index";

type Schemas = components["schemas"];
// The list answers every summary field but `compatibility` (always null there).
type SkillSummary = Omit<Schemas["SkillSummary"], "compatibility">;
type Submission = Schemas["SkillSubmission"];

export default function Skills() {
  const { api } = useSession();
  const skills = useQuery({ queryKey: ["skills-my"], queryFn: () => unwrap(api.GET("/v1/skills/my")) });
  const submissions = useQuery({
    queryKey: ["skill-submissions-my"],
    queryFn: () => unwrap(api.GET("/v1/skill-submissions/my")),
  });

  const [creating, setCreating] = useState(false);
  const closeCreate = useCallback(() => setCreating(false), []);
  const [created, setCreated] = useState<string | null>(null);
  const newSkill = (
    <button type="button" onClick={() => setCreating(true)}>
      <Plus className="icon" size={16} aria-hidden="true" />
      New skill
    </button>
  );

  return (
    <Page title="Skills" actions={newSkill}>
      <p className="muted">
        A skill is a SKILL.md (instructions with a YAML frontmatter) that coding assistants load. Yours are private; submit one
        for public release and a Toolport administrator reviews it.
      </p>
      <Drawer title="Create a skill" titleId="new-skill" open={creating} onClose={closeCreate}>
        <NewSkill
          onCreated={(name) => {
            setCreating(false);
            setCreated(name);
          }}
        />
      </Drawer>
      {created ? (
        <Note kind="success">
          Created <strong>{created}</strong> (private). Submit it for public release from the list below.
        </Note>
      ) : null}
      <h2>Your skills</h2>
      {skills.isPending ? (
        <Loading what="Loading skills" />
      ) : skills.error ? (
        <ErrorNote error={skills.error} />
      ) : skills.data.length === 0 ? (
        <EmptyState icon={Sparkles} title="No skills yet." action={newSkill}>
          Create one from a SKILL.md: instructions your coding assistants load when a task needs them.
        </EmptyState>
      ) : (
        <ul className="cards">
          {skills.data.map((s) => (
            <SkillCard key={s.id} skill={s} submissions={submissions.data ?? []} />
          ))}
        </ul>
      )}
      <h2>Your submissions</h2>
      {submissions.isPending ? (
        <Loading what="Loading submissions" />
      ) : submissions.error ? (
        <ErrorNote error={submissions.error} />
      ) : submissions.data.length === 0 ? (
        <p className="muted">No submissions yet.</p>
      ) : (
        <ul className="cards">
          {submissions.data.map((s) => (
            <li key={s.id} className="card" data-submission={s.id}>
              <h3>{s.skill_name}</h3>
              <SubmissionState submission={s} />
              {s.reviewer_notes ? (
                <div className="content-notes">
                  <span className="muted">Reviewer's notes:</span> {s.reviewer_notes}
                </div>
              ) : null}
            </li>
          ))}
        </ul>
      )}
    </Page>
  );
}

function SkillCard({ skill, submissions }: { skill: SkillSummary; submissions: Submission[] }) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const path = { params: { path: { skill_id: skill.id } } };
  const pending = submissions.some((s) => s.skill_name === skill.name && s.status === "pending");

  const submit = useMutation({
    mutationFn: () => unwrap(api.POST("/v1/skills/{skill_id}/submissions", path)),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ["skill-submissions-my"] }),
  });
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE("/v1/skills/{skill_id}", path)),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ["skills-my"] }),
  });

  return (
    <li className="card" data-skill={skill.id}>
      <h3>{skill.name}</h3>
      <p>{skill.description}</p>
      <div className="row">
        <Badge value={skill.visibility} label={skill.visibility === "public" ? "public" : "private"} />
        <span className="muted">
          created <When at={skill.created_at} />
        </span>
        {skill.license ? <span className="muted">license {skill.license}</span> : null}
      </div>
      <div className="row content-card-actions">
        {skill.visibility === "private" ? (
          pending ? (
            <span className="muted">Submitted: waiting for review.</span>
          ) : (
            <button type="button" disabled={submit.isPending} onClick={() => submit.mutate()}>
              Submit for public release
            </button>
          )
        ) : null}
        <ConfirmAction
          label="Delete"
          danger
          question={`Delete ${skill.name} for good?`}
          confirmLabel="Delete for good"
          busy={remove.isPending}
          onConfirm={() => remove.mutate()}
        />
      </div>
      {submit.isSuccess ? <Note kind="success">Submitted for review.</Note> : null}
      <ErrorNote error={submit.error ?? remove.error} />
    </li>
  );
}

const MAX_FILE_BYTES = 1024 * 1024;

function NewSkill({ onCreated }: { onCreated: (name: string) => void }) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const [text, setText] = useState("");
  const [nameText, setNameText] = useState("");
  const [nameEdited, setNameEdited] = useState(false);
  const [fileProblem, setFileProblem] = useState<string | null>(null);
  const [tried, setTried] = useState(false);
  const mdRef = useRef<HTMLTextAreaElement>(null);
  const nameRef = useRef<HTMLInputElement>(null);

  // The check runs on a deferred copy, so typing stays smooth in a long file.
  const deferred = useDeferredValue(text);
  const front = useMemo(() => readSkillMd(deferred), [deferred]);
  const name = nameEdited ? nameText : (front.name ?? nameText);
  const nameProblems = checkName(name, front.name);
  const mdProblems = front.problems;
  const ok = text.trim() !== "" && mdProblems.length === 0 && nameProblems.length === 0;

  const create = useMutation({
    mutationFn: () => unwrap(api.POST("/v1/skills", { body: { name, skill_md_content: text } })),
    onSuccess: (skill) => {
      onCreated(skill.name);
      setText("");
      setNameText("");
      setNameEdited(false);
      setTried(false);
      void queryClient.invalidateQueries({ queryKey: ["skills-my"] });
    },
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    setTried(true);
    if (text.trim() === "" || mdProblems.length > 0) {
      mdRef.current?.focus();
      return;
    }
    if (nameProblems.length > 0) {
      nameRef.current?.focus();
      return;
    }
    create.mutate();
  }

  async function readFile(file: File | undefined) {
    setFileProblem(null);
    if (!file) return;
    if (file.size > MAX_FILE_BYTES) {
      setFileProblem(`${file.name} is ${file.size} bytes; a skill is at most 1 MiB in all.`);
      return;
    }
    setText(await file.text());
  }

  const showMdProblems = text.trim() !== "" || tried;
  const mdShown = text.trim() === "" ? ["Paste or choose a SKILL.md first."] : mdProblems;

  return (
    <section aria-labelledby="new-skill">
      <form onSubmit={submit} className="content-form" noValidate>
        <Field label="SKILL.md file" hint="A .md file from your disk fills the text below; you can edit it there.">
          {(p) => (
            <input
              {...p}
              type="file"
              accept=".md,text/markdown,text/plain"
              onChange={(e) => void readFile(e.target.files?.[0])}
            />
          )}
        </Field>
        {fileProblem ? <p className="content-problem">{fileProblem}</p> : null}
        <Field
          label="SKILL.md"
          hint={
            <>
              Starts with a frontmatter block: a line <code>---</code>, <code>description: …</code> (what the skill does and when
              to use it), optionally <code>name</code>, <code>license</code>, <code>compatibility</code>, <code>metadata</code>,
              then a line <code>---</code>.
            </>
          }
        >
          {(p) => (
            <>
              <textarea
                {...p}
                ref={mdRef}
                className="content-skill-md"
                rows={12}
                spellCheck={false}
                value={text}
                aria-invalid={showMdProblems && mdShown.length > 0}
                aria-describedby={describedBy(p["aria-describedby"], showMdProblems ? "skill-md-check" : undefined)}
                onChange={(e) => setText(e.target.value)}
              />
              {showMdProblems ? (
                <Problems id="skill-md-check" problems={mdShown} ok={front.description ? describeOk(front.description) : null} />
              ) : null}
            </>
          )}
        </Field>
        <Field
          label="Name"
          hint="Lowercase letters, digits and single hyphens, 1 to 64 (e.g. pdf-tools); taken from the frontmatter's name when it has one."
        >
          {(p) => (
            <>
              <input
                {...p}
                ref={nameRef}
                value={name}
                maxLength={100}
                autoComplete="off"
                spellCheck={false}
                aria-invalid={(name !== "" || tried) && nameProblems.length > 0}
                aria-describedby={describedBy(
                  p["aria-describedby"],
                  (name !== "" || tried) && nameProblems.length > 0 ? "skill-name-check" : undefined,
                )}
                onChange={(e) => {
                  setNameText(e.target.value);
                  setNameEdited(true);
                }}
              />
              {(name !== "" || tried) && nameProblems.length > 0 ? (
                <Problems id="skill-name-check" problems={nameProblems} ok={null} />
              ) : null}
            </>
          )}
        </Field>
        <button type="submit" disabled={create.isPending}>
          {create.isPending ? "Creating…" : "Create skill"}
        </button>
        {tried && !ok && !create.isPending ? (
          <p className="content-problem" role="alert">
            Fix the problems marked above first.
          </p>
        ) : null}
        <ErrorNote error={create.error} />
      </form>
    </section>
  );
}

function Problems({ id, problems, ok }: { id: string; problems: string[]; ok: string | null }) {
  if (problems.length === 0) {
    return ok ? (
      <p id={id} className="content-ok">
        {ok}
      </p>
    ) : null;
  }
  return (
    <ul id={id} className="content-problems" aria-live="polite">
      {problems.map((p) => (
        <li key={p}>{p}</li>
      ))}
    </ul>
  );
}

const describedBy = (...ids: (string | undefined)[]) => ids.filter(Boolean).join(" ") || undefined;

const describeOk = (description: string) => `Frontmatter looks right: a description of ${[...description].length} characters.`;

// The content service's rules (services/content/src/skills/bundle.ts and frontmatter.ts).
const FENCE = /^---[ \t]*$/;
const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const MAX_NAME = 64;
const MAX_DESCRIPTION = 1024;
const MAX_COMPATIBILITY = 500;

interface FrontCheck {
  /** Problems with SKILL.md, each a sentence naming its field. */
  problems: string[];
  /** The frontmatter's `name`, when it gives one as text. */
  name: string | null;
  /** The frontmatter's description when it is usable. */
  description: string | null;
}

/** Reads a SKILL.md's frontmatter as the content service does, collecting every problem it finds. */
function readSkillMd(raw: string): FrontCheck {
  const none: FrontCheck = { problems: [], name: null, description: null };
  const text = raw.startsWith("\uFEFF") ? raw.slice(1) : raw;
  if (text.trim() === "") return none;
  const lines = text.split("\n").map((l) => l.replace(/\r$/, ""));
  if (!FENCE.test(lines[0] ?? "")) {
    return {
      ...none,
      problems: ["The first line must be --- (the frontmatter block: ---, lines such as description: …, then ---)."],
    };
  }
  const close = lines.findIndex((l, i) => i > 0 && FENCE.test(l));
  if (close === -1) return { ...none, problems: ["The frontmatter opened by --- on line 1 is never closed by a --- line."] };

  const doc = parseDocument(lines.slice(1, close).join("\n"), { prettyErrors: false });
  const error = doc.errors[0];
  if (error) {
    const line = lines.slice(1, close).join("\n").slice(0, error.pos[0]).split("\n").length + 1;
    return { ...none, problems: [`Invalid YAML on line ${line}: ${error.message.split("\n")[0]}`] };
  }
  let value: unknown;
  try {
    value = doc.toJS({ mapAsMap: true, maxAliasCount: 100 });
  } catch (err) {
    return { ...none, problems: [`Invalid YAML: ${(err as Error).message}`] };
  }
  const fields = value == null ? new Map<unknown, unknown>() : value;
  if (!(fields instanceof Map)) {
    return { ...none, problems: ["The frontmatter must be key: value lines, such as description: …"] };
  }

  const problems: string[] = [];
  const textField = (key: string): string | null => {
    const v = fields.get(key);
    if (v === null || v === undefined) return null;
    if (typeof v !== "string") {
      problems.push(`${key}: must be text (put it in quotes if YAML reads it as something else).`);
      return null;
    }
    return v.trim();
  };
  const description = textField("description");
  if (!description) {
    if (!fields.has("description") || description === "")
      problems.push("description: is required: say what the skill does and when to use it.");
  } else if ([...description].length > MAX_DESCRIPTION) {
    problems.push(`description: must be at most ${MAX_DESCRIPTION} characters (it has ${[...description].length}).`);
  }
  const name = textField("name");
  const compatibility = textField("compatibility");
  if (compatibility && [...compatibility].length > MAX_COMPATIBILITY)
    problems.push(`compatibility: must be at most ${MAX_COMPATIBILITY} characters.`);
  textField("license");
  const tools = fields.get("allowed-tools");
  if (tools != null && typeof tools !== "string" && !(Array.isArray(tools) && tools.every((t) => typeof t === "string")))
    problems.push("allowed-tools: must be a space-separated string or a list of strings.");
  const metadata = fields.get("metadata");
  if (metadata != null && !(metadata instanceof Map)) problems.push("metadata: must be key: value lines.");

  const usable = description && [...description].length <= MAX_DESCRIPTION ? description : null;
  return { problems, name: name || null, description: usable };
}

/** The skill's name as the service requires it, and equal to the frontmatter's when that gives one. */
function checkName(name: string, frontName: string | null): string[] {
  if (name === "") return ["Name: is required (or give name: in the frontmatter)."];
  const problems: string[] = [];
  if (name.length > MAX_NAME) problems.push(`Name: must be at most ${MAX_NAME} characters (it has ${name.length}).`);
  if (!NAME.test(name))
    problems.push(
      "Name: must be lowercase letters, digits and single hyphens, not starting or ending with a hyphen (e.g. pdf-tools).",
    );
  if (frontName !== null && frontName !== name)
    problems.push(`Name: the frontmatter's name is "${frontName}"; the skill's name must be the same.`);
  return problems;
}
