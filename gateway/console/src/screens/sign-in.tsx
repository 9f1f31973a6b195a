/**
 * Sign in, or sign up (a person: email, password of 10 or more characters, display name). On the OAuth
 * consent page (`forConsent`) it says why: the page it stays on shows the app's request once signed in.
 */
import { type FormEvent, useState } from "react";
import { useSessionState } from "../session";
import { ErrorNote, Field, Note } from "../ui/index";

export function SignIn({ forConsent = false }: { forConsent?: boolean }) {
  const { signIn, signUp, endedBecause } = useSessionState();
  const [mode, setMode] = useState<"in" | "up">(() => (new URLSearchParams(location.search).has("signup") ? "up" : "in"));
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [name, setName] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (mode === "in") await signIn(email, password);
      else await signUp(email, password, name.trim());
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  }

  return (
    <main id="main" className="sign-in">
      <h1>{mode === "in" ? "Sign in to Toolport" : "Create a Toolport account"}</h1>
      {endedBecause ? <Note kind="warning">{endedBecause}</Note> : null}
      {forConsent ? (
        <Note>An app asks to use Toolport for you. Sign in, or sign up, to see what it asks and to answer.</Note>
      ) : null}
      <form onSubmit={submit} aria-describedby={error ? "sign-in-error" : undefined}>
        {mode === "up" ? (
          <Field label="Name" hint="Shown to your organizations; default: your email's local part.">
            {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} autoComplete="name" maxLength={100} />}
          </Field>
        ) : null}
        <Field label="Email">
          {(p) => (
            <input
              {...p}
              type="email"
              required
              value={email}
              onChange={(e) => setEmail(e.target.value)}
              autoComplete="email"
              maxLength={254}
            />
          )}
        </Field>
        <Field label="Password" hint={mode === "up" ? "At least 10 characters." : undefined}>
          {(p) => (
            <input
              {...p}
              type="password"
              required
              minLength={mode === "up" ? 10 : undefined}
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              autoComplete={mode === "up" ? "new-password" : "current-password"}
            />
          )}
        </Field>
        <div id="sign-in-error">
          <ErrorNote error={error} />
        </div>
        <button type="submit" disabled={busy}>
          {mode === "in" ? "Sign in" : "Sign up"}
        </button>
      </form>
      <p>
        {mode === "in" ? "No account yet? " : "Have an account? "}
        <button
          type="button"
          className="link-button"
          onClick={() => {
            setMode(mode === "in" ? "up" : "in");
            setError(null);
          }}
        >
          {mode === "in" ? "Sign up" : "Sign in"}
        </button>
      </p>
      <p className="muted">
        Agents register themselves with <code>POST /v1/agents</code>; the API is described at <a href="/docs">/docs</a>.
      </p>
    </main>
  );
}
