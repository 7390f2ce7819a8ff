import { useState } from "preact/hooks";

/** Sign-in: the token is typed into a password field, kept in sessionStorage, never in a URL. */
export function SignIn({ onToken, problem }: { onToken: (token: string) => void; problem: string | null }) {
  const [value, setValue] = useState("");
  return (
    <section class="signin card" aria-labelledby="signin-title">
      <h1 id="signin-title">Sign in</h1>
      <p>
        Paste an API token. <code>read</code> shows everything, <code>operate</code> adds the controls and
        answers, <code>admin</code> adds stop. Create one with{" "}
        <code>overseer token create --scope operate</code>.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (value.trim()) onToken(value.trim());
        }}
      >
        <label for="token">API token</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="off"
          placeholder="ovr_…"
          value={value}
          onInput={(e) => setValue((e.currentTarget as HTMLInputElement).value)}
        />
        <button type="submit" class="primary">
          Sign in
        </button>
      </form>
      {problem ? (
        <p class="error" role="alert">
          {problem}
        </p>
      ) : null}
      <p class="muted small">
        The token stays in this tab only (sessionStorage) and is sent as a bearer header.
      </p>
    </section>
  );
}
