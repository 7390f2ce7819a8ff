/**
 * A push the remote refused because the branch is protected, in each forge's words: GitHub
 * (`GH006: Protected branch update failed for refs/heads/main.`, and `GH013` for repository
 * rules), GitLab (`You are not allowed to push code to protected branches on this project.`),
 * Gitea/Forgejo (`Not allowed to push to protected branch main`, `branch main is protected from
 * force push`). No retry changes such a refusal: the project must land through pull requests.
 */
const PROTECTED_BRANCH_WORDS = [
  /\bGH006\b/,
  /\bGH013\b/,
  /not allowed to (force )?push( code)? to (a )?protected branch/i,
  /protected branch update failed/i,
  /\bbranch \S+ is protected\b/i,
  /push to protected branch/i,
];

/** The remote's line that says the branch is protected (its `remote: ` prefix dropped), or null. */
export function protectedBranchRefusal(stderr: string): string | null {
  for (const raw of stderr.split("\n")) {
    const line = raw.replace(/^remote:\s*/, "").trim();
    if (PROTECTED_BRANCH_WORDS.some((words) => words.test(line))) return line;
  }
  return null;
}
