import type { ComponentChildren } from "preact";
import { useRef, useState } from "preact/hooks";

/**
 * A control that asks first: a modal dialog (native `<dialog>`: focus is trapped and Escape
 * cancels) with the consequence spelled out, optional fields, then the action. Errors from
 * the action stay in the dialog.
 */
export function ConfirmButton({
  label,
  title,
  consequence,
  danger,
  onConfirm,
  fields,
  testId,
}: {
  label: string;
  title: string;
  consequence: string;
  danger?: boolean;
  onConfirm: () => Promise<unknown>;
  fields?: ComponentChildren;
  testId?: string;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const open = () => {
    setError(null);
    dialog.current?.showModal();
  };
  const confirm = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      dialog.current?.close();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" class={danger ? "danger" : ""} onClick={open} data-testid={testId}>
        {label}
      </button>
      <dialog ref={dialog} aria-labelledby={`${testId ?? label}-title`}>
        <form method="dialog" onSubmit={confirm}>
          <h2 id={`${testId ?? label}-title`}>{title}</h2>
          <p>{consequence}</p>
          {fields}
          {error ? (
            <p class="error" role="alert">
              {error}
            </p>
          ) : null}
          <div class="dialog-actions">
            <button type="button" onClick={() => dialog.current?.close()} disabled={busy}>
              Cancel
            </button>
            <button type="submit" class={danger ? "danger" : "primary"} disabled={busy}>
              {busy ? "Working…" : `Confirm: ${label}`}
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}
