/**
 * The GitLab double's note writes (doc/api/notes.md "Create new merge request note",
 * discussions.md "Add note to existing merge request thread"): a comment on the merge request,
 * and a reply in a thread, each answered with the note GitLab creates.
 */
import { z } from "zod";
import { type ContractRoute, fromExample, shapeOf } from "./example-contract.ts";
import { GITLAB_DIFF_NOTE_EXAMPLE, GITLAB_NOTE_EXAMPLE } from "./gitlab-examples.ts";
import { canWrite, denied, forbidden, type GitLabRouteContext, notFound } from "./gitlab-route-helpers.ts";

const MR = "/projects/{id}/merge_requests/{merge_request_iid}";

export function gitlabNoteRoutes(): ContractRoute<GitLabRouteContext>[] {
  return [
    {
      method: "POST",
      template: `${MR}/notes`,
      body: z.strictObject({
        body: z.string().min(1).max(1_000_000),
        created_at: z.string().optional(),
        internal: z.boolean().optional(),
        merge_request_diff_head_sha: z.string().optional(),
      }),
      responses: { 201: shapeOf(GITLAB_NOTE_EXAMPLE), 400: shapeOf({ message: "" }), ...denied },
      handle: ({ project, params, body, user, state }) => {
        if (!canWrite(user)) return forbidden();
        const mr = project.mrs.find((m) => m.iid === Number(params.merge_request_iid));
        if (!mr) return notFound("Merge Request");
        const note = {
          id: state.nextId(),
          author: user.username,
          body: String(body.body),
          createdAt: new Date().toISOString(),
          system: false,
        };
        mr.notes.push(note);
        return {
          status: 201,
          body: fromExample(GITLAB_NOTE_EXAMPLE, {
            id: note.id,
            body: note.body,
            author: state.user(user.username),
            created_at: note.createdAt,
            updated_at: note.createdAt,
            system: false,
            noteable_id: mr.id,
            noteable_iid: mr.iid,
            project_id: project.id,
          }),
        };
      },
    },
    {
      method: "POST",
      template: `${MR}/discussions/{discussion_id}/notes`,
      body: z.strictObject({
        body: z.string().min(1).max(1_000_000),
        created_at: z.string().optional(),
        note_id: z.number().int().optional(),
      }),
      responses: { 201: shapeOf(GITLAB_DIFF_NOTE_EXAMPLE), 400: shapeOf({ message: "" }), ...denied },
      handle: async ({ project, params, body, user, state }) => {
        if (!canWrite(user)) return forbidden();
        const discussion = project.discussions.find(
          (d) => d.id === params.discussion_id && d.mr === Number(params.merge_request_iid),
        );
        if (!discussion) return notFound("Discussion");
        const note = {
          id: state.nextId(),
          author: user.username,
          body: String(body.body),
          createdAt: new Date().toISOString(),
        };
        discussion.notes.push(note);
        const shown = (await state.discussionBody(project, discussion)).notes as unknown[];
        return { status: 201, body: shown.at(-1) };
      },
    },
  ];
}
