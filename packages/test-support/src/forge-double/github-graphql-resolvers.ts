/**
 * The GitHub double's GraphQL: every query is executed against GitHub's published schema
 * (`@octokit/graphql-schema`); a field, argument, type or variable the schema lacks is a violation.
 */

import { schema as githubSchema } from "@octokit/graphql-schema";
import { buildSchema, type GraphQLSchema, graphql } from "graphql";
import type { ApiAnswer } from "./double-server.ts";
import { canWrite, type GitHubDoubleState, type GitHubDoubleUser } from "./github-double-state.ts";

export async function answerGraphql(
  double: GitHubDoubleState,
  request: { query: string; variables?: Record<string, unknown> },
  user: GitHubDoubleUser,
  violations: string[],
): Promise<ApiAnswer> {
  const result = await graphql({
    schema: githubGraphqlSchema(),
    source: request.query,
    variableValues: request.variables ?? {},
    rootValue: {
      repository: ({ owner, name }: { owner: string; name: string }) => {
        const repository = `${owner}/${name}`;
        const state = double.repos.get(repository);
        if (!state || user.role === "none") return null;
        return {
          pullRequest: ({ number }: { number: number }) => {
            if (!state.pulls.some((p) => p.number === number)) return null;
            return {
              reviewThreads: () => ({
                nodes: state.threads
                  .filter((t) => t.pull === number)
                  .map((t) => ({
                    id: t.id,
                    isResolved: t.resolved,
                    path: t.path,
                    line: t.line,
                    comments: () => ({
                      nodes: t.comments.map((c) => ({
                        databaseId: c.id,
                        author: { __typename: "User", login: c.login },
                        body: c.body,
                        createdAt: c.createdAt,
                      })),
                    }),
                  })),
              }),
            };
          },
        };
      },
      enablePullRequestAutoMerge: ({
        input,
      }: {
        input: { pullRequestId: string; mergeMethod?: string; expectedHeadOid?: string };
      }) => {
        const found = [...double.repos.entries()]
          .flatMap(([repository, state]) => state.pulls.map((pull) => ({ repository, pull })))
          .find(({ pull }) => pull.nodeId === input.pullRequestId);
        if (!found)
          throw new Error(`Could not resolve to a node with the global id of '${input.pullRequestId}'`);
        if (!canWrite(user)) throw new Error("Resource not accessible by personal access token");
        const mergeMethod = input.mergeMethod ?? "MERGE";
        found.pull.autoMerge = { method: mergeMethod.toLowerCase(), by: user.login };
        return { pullRequest: { autoMergeRequest: { mergeMethod } } };
      },
    },
  });
  if (
    result.errors?.some((e) => /Cannot query field|Unknown argument|Unknown type|Variable/.test(e.message))
  ) {
    violations.push(...result.errors.map((e) => `GraphQL: ${e.message}`));
  }
  return {
    status: 200,
    body: result.errors
      ? {
          data: result.data ?? null,
          errors: result.errors.map((e) => ({ message: e.message, type: "FORBIDDEN" })),
        }
      : { data: result.data },
  };
}

let schemaCache: GraphQLSchema | undefined;
function githubGraphqlSchema(): GraphQLSchema {
  // GitHub's published SDL defines two fields twice; it is taken as GitHub serves it.
  schemaCache ??= buildSchema(githubSchema.idl, { assumeValidSDL: true });
  return schemaCache;
}
