/**
 * A Linear for tests: its GraphQL API at `POST /graphql`, every operation executed by graphql-js
 * against Linear's schema as `@linear/sdk` ships it (linear-schema.ts), so a query or mutation
 * that names a field, argument or input Linear lacks is refused and recorded as a violation.
 * Authentication as Linear does it: `Authorization: <personal API key>` or `Bearer <OAuth token>`;
 * anything else is an "authentication error". People act through its methods (a human files,
 * assigns, moves or comments on an issue), each sending webhooks as Linear does.
 *
 * Webhooks follow Linear's developer docs ("Webhooks", linear.app/developers/webhooks): a JSON
 * POST with `Linear-Delivery` (a uuid per delivery), `Linear-Event` (the entity type) and
 * `Linear-Signature`, the hex HMAC-SHA256 of the raw body keyed with the webhook's signing
 * secret; the body carries `webhookTimestamp` (ms since the epoch), which receivers check is
 * within a minute of now. `@linear/sdk`'s LinearWebhookClient verifies exactly that.
 */
import { createHmac, randomUUID } from "node:crypto";
import type {
  EntityWebhookPayloadWithCommentData,
  EntityWebhookPayloadWithIssueData,
} from "@linear/sdk/webhooks";
import { graphql } from "graphql";
import type { ApiAnswer, ApiHandler } from "../forge-double/double-server.ts";
import {
  type LinearDoubleComment,
  type LinearDoubleIssue,
  type LinearDoubleUser,
  LinearDoubleWorkspace,
} from "./linear-double-state.ts";
import { type LinearResolverContext, rootValue } from "./linear-resolvers.ts";
import { linearSchema } from "./linear-schema.ts";
import { TrackerDoubleBase } from "./tracker-double-base.ts";

function linearError(message: string, type: string, code: string) {
  return {
    errors: [{ message, extensions: { type, code, userError: false, userPresentableMessage: message } }],
  };
}

export class LinearDouble extends TrackerDoubleBase {
  readonly kind = "linear" as const;
  readonly workspace = new LinearDoubleWorkspace();
  /** The user the adapter authenticates as (an Overseer bot user). */
  readonly bot: LinearDoubleUser;
  /** A person in the workspace. */
  readonly human: LinearDoubleUser;
  /** How a webhook's sender is named in payloads. */
  #webhookId = randomUUID();

  private constructor() {
    super(
      (status) =>
        status === 429
          ? linearError("Rate limit exceeded", "ratelimited", "RATELIMITED")
          : linearError("Internal server error", "internal error", "INTERNAL_SERVER_ERROR"),
      (body, secret, deliveryId) => ({
        "linear-delivery": deliveryId,
        "linear-event": (JSON.parse(body) as { type: string }).type,
        "linear-signature": createHmac("sha256", secret).update(body).digest("hex"),
        "user-agent": "Linear-Webhook",
      }),
    );
    this.bot = this.workspace.addUser("Overseer Bot");
    this.human = this.workspace.addUser("Ada Lovelace");
  }

  static async start(): Promise<LinearDouble> {
    const double = new LinearDouble();
    await double.start();
    return double;
  }

  /** The GraphQL endpoint (`apiUrl` of a LinearClient). */
  get apiUrl(): string {
    return `${this.url}/graphql`;
  }

  protected async handleApi(request: Parameters<ApiHandler>[0]): Promise<ApiAnswer | null> {
    if (request.method !== "POST" || request.url.pathname !== "/graphql") return null;
    const authorization = String(request.headers.authorization ?? "").replace(/^Bearer\s+/i, "");
    const viewer = this.workspace.users.find((u) => u.apiKey === authorization);
    if (!viewer) {
      return {
        status: 400,
        body: linearError(
          "Authentication required, not authenticated",
          "authentication error",
          "AUTHENTICATION_ERROR",
        ),
      };
    }
    const body = request.body as { query?: string; variables?: Record<string, unknown> } | undefined;
    if (typeof body?.query !== "string") {
      this.violation("Linear: a GraphQL request without a query");
      return { status: 400, body: linearError("Must provide query string.", "graphql error", "BAD_REQUEST") };
    }
    const context: LinearResolverContext = {
      workspace: this.workspace,
      viewer,
      baseUrl: `${this.url}/overseer-test`,
      violations: this.server.violations,
      changed: (what, issue, comment) => this.#announce(what, issue, comment, viewer),
    };
    const result = await graphql({
      schema: linearSchema(),
      source: body.query,
      variableValues: body.variables ?? {},
      rootValue: rootValue(context),
    });
    const errors = result.errors ?? [];
    const invalid = errors.filter((e) => e.path === undefined);
    for (const error of errors) {
      const text = error.message;
      if (
        error.path === undefined ||
        text.startsWith("the Linear double does not") ||
        text.startsWith("Cannot")
      ) {
        this.violation(`Linear: ${text} in ${body.query.slice(0, 120).replace(/\s+/g, " ")}`);
      }
    }
    if (invalid.length > 0) {
      const { errors: list } = linearError(
        invalid[0]?.message ?? "",
        "graphql error",
        "GRAPHQL_VALIDATION_FAILED",
      );
      return { status: 400, body: { errors: list } };
    }
    if (errors.length > 0) {
      const list = errors.map((e) => ({
        message: e.message,
        path: e.path,
        extensions: {
          type: "invalid input",
          code: "INPUT_ERROR",
          userError: true,
          userPresentableMessage: e.message,
        },
      }));
      return { status: 200, body: { data: result.data ?? null, errors: list } };
    }
    return { status: 200, body: { data: result.data } };
  }

  // ---- people acting in Linear ----

  /** A human files an issue in team `teamKey` (Todo unless `state` says otherwise). */
  fileIssue(
    teamKey: string,
    fields: {
      title: string;
      description?: string;
      labels?: string[];
      assignee?: LinearDoubleUser | null;
      state?: string;
    },
  ): LinearDoubleIssue {
    const team = this.workspace.teams.find((t) => t.key === teamKey);
    if (!team) throw new Error(`no team ${teamKey}`);
    const now = this.workspace.clock.now();
    const issue: LinearDoubleIssue = {
      id: randomUUID(),
      number: this.workspace.issues.filter((i) => i.teamId === team.id).length + 1,
      teamId: team.id,
      createdAt: now,
      updatedAt: now,
      title: fields.title,
      description: fields.description ?? "",
      stateId: this.workspace.stateNamed(team.id, fields.state ?? "Todo").id,
      labelIds: (fields.labels ?? []).map((name) => this.#label(name, team.id)),
      assigneeId: fields.assignee === undefined ? null : (fields.assignee?.id ?? null),
    };
    this.workspace.issues.push(issue);
    this.#announce("issue", issue, undefined, this.human, "create");
    return issue;
  }

  /** A human assigns the issue (null: unassigns it). */
  assign(issue: LinearDoubleIssue, user: LinearDoubleUser | null): void {
    issue.assigneeId = user?.id ?? null;
    this.#touched(issue);
  }

  /** A human moves the issue to the workflow state named `state`. */
  move(issue: LinearDoubleIssue, state: string): void {
    issue.stateId = this.workspace.stateNamed(issue.teamId, state).id;
    this.#touched(issue);
  }

  /** A human marks `blocker` as blocking `issue`. */
  block(issue: LinearDoubleIssue, blocker: LinearDoubleIssue): void {
    this.workspace.relations.push({
      id: randomUUID(),
      type: "blocks",
      issueId: blocker.id,
      relatedIssueId: issue.id,
    });
    this.#touched(issue);
  }

  /** A human comments on the issue. */
  comment(issue: LinearDoubleIssue, body: string, by: LinearDoubleUser = this.human): LinearDoubleComment {
    const comment = {
      id: randomUUID(),
      issueId: issue.id,
      userId: by.id,
      body,
      createdAt: this.workspace.clock.now(),
    };
    this.workspace.comments.push(comment);
    this.#announce("comment", issue, comment, by);
    return comment;
  }

  commentsOn(issue: LinearDoubleIssue): LinearDoubleComment[] {
    return this.workspace.comments.filter((c) => c.issueId === issue.id);
  }

  stateOf(issue: LinearDoubleIssue): string {
    return this.workspace.state(issue.stateId).name;
  }

  labelsOf(issue: LinearDoubleIssue): string[] {
    return this.workspace.labels.filter((l) => issue.labelIds.includes(l.id)).map((l) => l.name);
  }

  #label(name: string, teamId: string): string {
    const found = this.workspace.labels.find(
      (l) => l.name === name && (l.teamId === null || l.teamId === teamId),
    );
    return (found ?? this.workspace.addLabel(name, teamId)).id;
  }

  #touched(issue: LinearDoubleIssue): void {
    issue.updatedAt = this.workspace.clock.now();
    this.#announce("issue", issue, undefined, this.human);
  }

  /** Sends the webhook for a change, shaped as `@linear/sdk/webhooks` types it. */
  #announce(
    what: "issue" | "comment",
    issue: LinearDoubleIssue,
    comment: LinearDoubleComment | undefined,
    actor: LinearDoubleUser,
    action: "create" | "update" = "update",
  ): void {
    const identifier = this.workspace.identifier(issue);
    const url = `${this.url}/overseer-test/issue/${identifier}`;
    const base = {
      actor: {
        id: actor.id,
        name: actor.name,
        email: actor.email,
        type: "user",
        url: `${this.url}/u/${actor.id}`,
      },
      createdAt: new Date().toISOString(),
      organizationId: this.workspace.organizationId,
      url,
      webhookId: this.#webhookId,
      webhookTimestamp: Date.now(),
    };
    if (what === "comment" && comment) {
      const payload = {
        ...base,
        action: "create",
        type: "Comment",
        data: {
          id: comment.id,
          body: comment.body,
          createdAt: comment.createdAt,
          updatedAt: comment.createdAt,
          issueId: issue.id,
          userId: comment.userId,
          reactionData: {},
        },
      } as unknown as EntityWebhookPayloadWithCommentData;
      this.deliver(payload, randomUUID());
      return;
    }
    const state = this.workspace.state(issue.stateId);
    const payload = {
      ...base,
      action,
      type: "Issue",
      data: {
        id: issue.id,
        identifier,
        number: issue.number,
        title: issue.title,
        description: issue.description,
        createdAt: issue.createdAt,
        updatedAt: issue.updatedAt,
        url,
        teamId: issue.teamId,
        stateId: state.id,
        state: { id: state.id, name: state.name, type: state.type, color: "#000000" },
        labelIds: [...issue.labelIds],
        assigneeId: issue.assigneeId,
      },
    } as unknown as EntityWebhookPayloadWithIssueData;
    this.deliver(payload, randomUUID());
  }
}
