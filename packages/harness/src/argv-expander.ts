/** Values substituted into a harness argv (docs/runner-config.md). */
export interface ArgvPlaceholders {
  /** `{root}`: the project root as the agent sees it (the run's checkout). */
  root: string;
  /** `{task}`: task id, e.g. `S00-028`. */
  task: string;
  /** `{role}`: the task's role. */
  role: string;
  /** `{agent}`: this run's agent id. */
  agent: string;
  /** `{action}`: `execute | review | resolve`. */
  action: string;
  /** `{prompt_file}`: path of the file holding this run's prompt. */
  prompt_file: string;
}

const PLACEHOLDER = /\{(root|task|role|agent|action|prompt_file)\}/g;

/**
 * Replaces `{root} {task} {role} {agent} {action} {prompt_file}` inside each argv element.
 * There is no shell: an element stays one argument whatever the value contains (spaces,
 * quotes, `$`), and a substituted value is never scanned again for placeholders. Unknown
 * `{names}` are left as they are, so JSON or brace syntax in arguments survives.
 */
export function expandArgv(argv: readonly string[], placeholders: ArgvPlaceholders): string[] {
  return argv.map((element) =>
    element.replace(PLACEHOLDER, (_match, name: keyof ArgvPlaceholders) => placeholders[name]),
  );
}
