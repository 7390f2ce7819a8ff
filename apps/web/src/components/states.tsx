import type { ComponentChildren } from "preact";
import type { Loaded } from "../lib/hooks.ts";

/** Loading, error and empty states, the same on every view. */
export function Loading({ what }: { what: string }) {
  return (
    <p class="state loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function ErrorState({ error, retry }: { error: Error; retry?: () => void }) {
  return (
    <div class="state error" role="alert">
      <p>{error.message}</p>
      {retry ? (
        <button type="button" onClick={retry}>
          Retry
        </button>
      ) : null}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="state empty">{children}</p>;
}

/** Renders `children(data)` once loaded; the loading or error state before that. */
export function Load<T>({
  state,
  what,
  children,
}: {
  state: Loaded<T>;
  what: string;
  children: (data: T) => ComponentChildren;
}) {
  if (state.data !== null)
    return (
      <>
        {state.error ? <ErrorState error={state.error} retry={state.reload} /> : null}
        {children(state.data)}
      </>
    );
  if (state.error) return <ErrorState error={state.error} retry={state.reload} />;
  return <Loading what={what} />;
}
