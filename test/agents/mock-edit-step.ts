/**
 * The file edit the scripted model makes before its shell call, when asked to
 * (MockModelOptions.edit in mock-model-server.ts): each CLI's own file tool, so the run's
 * transcript shows an edit the CLI made (not only a shell redirection). Then the conversation
 * goes on as usual: the shell call running the script, then "Done.".
 *
 * Claude's, Copilot's and opencode's tools want an absolute path: the model reads the working
 * directory from the CLI's system prompt, as a real model does. Codex 0.171 offers no file tool
 * to a model outside its catalogue, but recognises `apply_patch` run through its shell tool
 * and applies the patch itself (a `file_change` item).
 */

export interface EditStep {
  /** The file to write, relative to the working directory. */
  file: string;
  content: string;
}

/** The working directory a CLI's request names (system prompt or environment context), or null. */
export function workingDirectory(requestText: string): string | null {
  const match =
    /<cwd>([^<]+)<\/cwd>/.exec(requestText) ??
    /(?:Primary|Current)? ?[Ww]orking directory: ([^\s\\"]+)/.exec(requestText);
  return match?.[1] ?? null;
}

const absolute = (requestText: string, file: string) => {
  const cwd = workingDirectory(requestText);
  return cwd === null ? file : `${cwd.replace(/\/$/, "")}/${file}`;
};

/** A patch in Codex's apply_patch format adding `file`. */
function codexPatch(edit: EditStep): string {
  const lines = edit.content.replace(/\n$/, "").split("\n");
  return [
    "apply_patch <<'PATCH'",
    "*** Begin Patch",
    `*** Add File: ${edit.file}`,
    ...lines.map((line) => `+${line}`),
    "*** End Patch",
    "PATCH",
  ].join("\n");
}

/** The tool call (name and arguments) that makes `edit` with `cli`'s own tool. */
export function editCall(
  cli: "codex" | "copilot" | "claude" | "opencode" | "gemini",
  edit: EditStep,
  requestText: string,
): { name: string; args: Record<string, unknown> } {
  switch (cli) {
    case "codex":
      return { name: "exec_command", args: { cmd: codexPatch(edit) } };
    case "copilot":
      return { name: "create", args: { path: absolute(requestText, edit.file), file_text: edit.content } };
    case "claude":
      return { name: "Write", args: { file_path: absolute(requestText, edit.file), content: edit.content } };
    case "opencode":
      return { name: "write", args: { filePath: absolute(requestText, edit.file), content: edit.content } };
    case "gemini":
      return { name: "write_file", args: { file_path: edit.file, content: edit.content } };
  }
}

/**
 * What the turn answers, from how many tool results the conversation holds: with an edit step,
 * none → the edit, one → the shell call, more → "Done."; without, none → the shell call.
 */
export function scriptedStep(
  toolResults: number,
  edit: EditStep | undefined,
): "edit-call" | "tool-call" | "final" {
  if (edit === undefined) return toolResults === 0 ? "tool-call" : "final";
  if (toolResults === 0) return "edit-call";
  return toolResults === 1 ? "tool-call" : "final";
}
