/**
 * What every forge double shares around its API: the scratch directory of its bare
 * repositories (real git over smart HTTP, `cloneUrl`), the HTTP server with its faults and
 * request log, the contract violations a test asserts empty, and webhooks: deliveries POSTed
 * to the URLs a test registers, each signed the way that forge signs them.
 */
import { rm } from "node:fs/promises";
import { DoubleGit } from "./double-git.ts";
import { type ApiHandler, type ApiRequest, DoubleServer, type Fault } from "./double-server.ts";

export interface WebhookDelivery {
  readonly url: string;
  readonly event: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  /** The receiver's answer (0 when it could not be reached or the delivery was lost). */
  status: number;
  /** Lost on its way (`loseWebhooks`): recorded here but never sent. */
  readonly lost: boolean;
}

/** Which deliveries `loseWebhooks` drops: an event, and optionally the payload's action. */
export interface WebhookLoss {
  readonly event: string;
  readonly action?: string;
  /** How many matching events are lost, each for every webhook (default 1). */
  readonly times?: number;
}

/** The headers a forge sends with one delivery: its event, delivery id and proof of the secret. */
export type WebhookSigner = (
  event: string,
  body: string,
  secret: string,
  id: string,
) => Record<string, string>;

export function cloneUrlOf(url: string, repository: string): string {
  return `${url}/${repository}.git`;
}

export abstract class ForgeDoubleBase {
  readonly git: DoubleGit;
  readonly deliveries: WebhookDelivery[] = [];
  protected readonly server: DoubleServer;
  readonly #root: string;
  readonly #hooks: { url: string; secret: string }[] = [];
  readonly #pending = new Set<Promise<void>>();
  readonly #signer: WebhookSigner;
  #losses: (WebhookLoss & { left: number })[] = [];
  #deliveryId = 0;

  protected constructor(
    root: string,
    apiPrefix: RegExp,
    faultBody: (status: number, fault?: Fault) => unknown,
    signer: WebhookSigner,
  ) {
    this.#root = root;
    this.git = new DoubleGit(root);
    this.server = new DoubleServer(root, apiPrefix, (request) => this.handleApi(request), faultBody);
    this.#signer = signer;
  }

  /** The web URL (the `forge.url` a project names). */
  get url(): string {
    return this.server.url;
  }

  get violations(): readonly string[] {
    return this.server.violations;
  }

  /** The contract violations found since the last call (a test asserts them empty after each case). */
  takeViolations(): string[] {
    return this.server.violations.splice(0);
  }

  get requests(): readonly ApiRequest[] {
    return this.server.requests;
  }

  cloneUrl(repository: string): string {
    return cloneUrlOf(this.url, repository);
  }

  fail(fault: Fault): void {
    this.server.fail(fault);
  }

  clearFaults(): void {
    this.server.clearFaults();
  }

  /** Sends every later event to `url`, signed with `secret` as the forge does. */
  addWebhook(url: string, secret: string): void {
    this.#hooks.push({ url, secret });
  }

  /**
   * The next events matching `loss` are lost on the way to every webhook (a receiver down, a
   * network partition): recorded in `deliveries` with `lost: true`, never sent, never redelivered.
   */
  loseWebhooks(loss: WebhookLoss): void {
    this.#losses.push({ ...loss, left: loss.times ?? 1 });
  }

  /** Waits until every delivery sent so far has been answered. */
  async flushWebhooks(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  async close(): Promise<void> {
    await this.flushWebhooks();
    await this.server.close();
    await rm(this.#root, { recursive: true, force: true });
  }

  /** Answers one API request (the server has already applied faults and logs it). */
  protected abstract handleApi(request: Parameters<ApiHandler>[0]): ReturnType<ApiHandler>;

  /** Waits for `work` (a delivery still being built) in `flushWebhooks` and `close`. */
  protected track(work: Promise<unknown>): void {
    const tracked: Promise<void> = work
      .then(
        () => undefined,
        (error: unknown) => {
          this.server.violations.push(`a webhook delivery could not be built: ${String(error)}`);
        },
      )
      .finally(() => this.#pending.delete(tracked));
    this.#pending.add(tracked);
  }

  /** Delivers `payload` as `event` to every registered webhook (in the background; `flushWebhooks` waits). */
  protected deliver(event: string, payload: unknown): void {
    const body = JSON.stringify(payload);
    const action = (payload as { action?: unknown } | null)?.action;
    // A lost event is lost for every webhook it would have gone to.
    const loss = this.#losses.find(
      (l) => l.left > 0 && l.event === event && (l.action === undefined || l.action === action),
    );
    if (loss) loss.left -= 1;
    for (const hook of this.#hooks) {
      const id = `00000000-0000-4000-8000-${String(++this.#deliveryId).padStart(12, "0")}`;
      const headers = {
        "content-type": "application/json",
        ...this.#signer(event, body, hook.secret, id),
      };
      const delivery: WebhookDelivery = { url: hook.url, event, headers, body, status: 0, lost: !!loss };
      this.deliveries.push(delivery);
      if (loss) continue;
      const sent = fetch(hook.url, { method: "POST", headers, body })
        .then(async (response) => {
          delivery.status = response.status;
          await response.body?.cancel();
        })
        .catch(() => undefined)
        .finally(() => this.#pending.delete(sent));
      this.#pending.add(sent);
    }
  }
}
