import { GitInputError } from "./git-error.ts";

/** Who a commit is by. Overseer commits with committer = author. */
export interface CommitAuthor {
  name: string;
  email: string;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
const FORBIDDEN = /[<>\x00-\x1f\x7f]/;

/**
 * The environment that makes git use `author` as both author and committer. Passing identity by
 * environment (not `-c user.name`) keeps it out of any config and beats whatever a repository
 * configures.
 */
export function identityEnv(author: CommitAuthor, field = "author"): Record<string, string> {
  if (author === null || typeof author !== "object") {
    throw new GitInputError(field, `expected {name, email}, received ${JSON.stringify(author)}`);
  }
  const name = typeof author.name === "string" ? author.name.trim() : "";
  const email = typeof author.email === "string" ? author.email.trim() : "";
  if (name === "" || FORBIDDEN.test(name)) {
    throw new GitInputError(
      `${field}.name`,
      `expected a non-empty name without "<", ">" or control characters, received ${JSON.stringify(author.name)}`,
    );
  }
  if (email === "" || FORBIDDEN.test(email)) {
    throw new GitInputError(
      `${field}.email`,
      `expected a non-empty e-mail without "<", ">" or control characters, received ${JSON.stringify(author.email)}`,
    );
  }
  return {
    GIT_AUTHOR_NAME: name,
    GIT_AUTHOR_EMAIL: email,
    GIT_COMMITTER_NAME: name,
    GIT_COMMITTER_EMAIL: email,
  };
}
