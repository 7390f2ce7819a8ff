/**
 * The GitHub double's webhook payloads, honest the way its REST answers are: each one starts
 * from a recorded delivery of that event and action in `@octokit/webhooks-examples`, the
 * double's own values are laid over it (numbers, branches, shas, people, states), and the
 * result is validated against that event's JSON schema in `@octokit/webhooks-schemas`; a
 * payload GitHub would not send makes the double's `violations` non-empty.
 */
import { createRequire } from "node:module";
import { Ajv, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";

type Json = Record<string, unknown>;

interface ExampleEvent {
  readonly name: string;
  readonly examples: readonly Json[];
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export class GitHubWebhookPayloads {
  readonly #examples: readonly ExampleEvent[];
  readonly #ajv: Ajv;
  readonly #compiled = new Map<string, ValidateFunction>();

  private constructor(examples: readonly ExampleEvent[], schema: Json) {
    this.#examples = examples;
    this.#ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
    this.#ajv.addSchema({ $id: "webhooks", definitions: schema.definitions });
  }

  static #instance: GitHubWebhookPayloads | undefined;

  /** The api.github.com examples and schemas, loaded once per process. */
  static load(): GitHubWebhookPayloads {
    if (!GitHubWebhookPayloads.#instance) {
      const require = createRequire(import.meta.url);
      GitHubWebhookPayloads.#instance = new GitHubWebhookPayloads(
        require("@octokit/webhooks-examples") as ExampleEvent[],
        require("@octokit/webhooks-schemas") as Json,
      );
    }
    return GitHubWebhookPayloads.#instance;
  }

  /** A user as the recorded deliveries carry one (the first `pull_request` example's sender). */
  exampleUser(): Json {
    const example = this.#examples.find((e) => e.name === "pull_request")?.examples[0];
    return (example?.sender ?? {}) as Json;
  }

  /**
   * The recorded example of `event` with `action` (the first one; `status` has no action; the
   * event's first example when none has that action, the schema still being the action's), with
   * `fields` laid over it: objects merge key by key, anything else replaces the example's value.
   * `problems` lists where the result breaks the event's schema.
   */
  build(
    event: string,
    action: string | null,
    fields: Json,
    /** The recorded action to start from when `action` has none (issues.closed: `reopened`, the same shape). */
    like?: string,
  ): { payload: Json; problems: string[] } {
    const recorded = this.#examples.find((e) => e.name === event)?.examples ?? [];
    // An action with no recorded example (pull_request.edited) starts from `like`'s, else the event's first one.
    const example =
      recorded.find((e) => action === null || e.action === action) ??
      recorded.find((e) => e.action === like) ??
      recorded[0];
    if (!example) return { payload: fields, problems: [`webhook ${event}.${action}: no recorded example`] };
    const payload = overlay(example, fields) as Json;
    const definition = `${event}$${action ?? "event"}`;
    let validate = this.#compiled.get(definition);
    if (!validate) {
      validate = this.#ajv.compile({ $ref: `webhooks#/definitions/${definition}` });
      this.#compiled.set(definition, validate);
    }
    const problems = validate(payload)
      ? []
      : (validate.errors ?? []).map(
          (e) => `webhook ${event}.${action ?? ""}${e.instancePath}: ${e.message ?? "invalid"}`,
        );
    return { payload, problems };
  }
}

/** `fields` laid over `base`: plain objects merge recursively, anything else (arrays too) replaces. */
export function overlay(base: unknown, fields: unknown): unknown {
  if (!isObject(base) || !isObject(fields)) return fields === undefined ? base : fields;
  const merged: Json = { ...base };
  for (const [key, value] of Object.entries(fields)) merged[key] = overlay(base[key], value);
  return merged;
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
