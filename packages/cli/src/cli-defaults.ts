/** What a CLI flag means when it is not given: one place, read by the commands and their usage. */
export const CLI_DEFAULTS = Object.freeze({
  /** `init --branch`: the branch work lands on (or that a working copy's overseer/BRANCH starts from). */
  branch: "main",
  /** `task list --limit`: most tasks listed. */
  taskListLimit: 1000,
  /** `doctor --deep --probe-timeout`: seconds one role's model probe may take. */
  probeTimeoutSeconds: 60,
});
