/**
 * What the tracker doubles (Linear, Jira) share: the HTTP server with faults on demand and a
 * request log (the forge doubles' DoubleServer, without git), the contract violations a test
 * asserts empty, and webhooks POSTed to the URLs a test registers, each signed the way that
 * tracker signs them.
 */
import { type ApiHandler, type ApiRequest, DoubleServer, type Fault } from "../forge-double/double-server.ts";

export interface TrackerDelivery {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  /** The receiver's answer (0 when it could not be reached). */
  status: number;
}

/** The headers one delivery carries: its id and the proof of the secret. */
export type TrackerSigner = (body: string, secret: string, deliveryId: string) => Record<string, string>;

export abstract class TrackerDoubleBase {
  readonly deliveries: TrackerDelivery[] = [];
  protected readonly server: DoubleServer;
  readonly #hooks: { url: string; secret: string }[] = [];
  readonly #pending = new Set<Promise<void>>();
  readonly #signer: TrackerSigner;
  /** Deliveries to drop on their way (counted down). */
  #lose = 0;

  protected constructor(faultBody: (status: number, fault?: Fault) => unknown, signer: TrackerSigner) {
    // No git here: every path is API.
    this.server = new DoubleServer("/nonexistent", /^\//, (request) => this.handleApi(request), faultBody);
    this.#signer = signer;
  }

  protected abstract handleApi(request: Parameters<ApiHandler>[0]): ReturnType<ApiHandler>;

  get url(): string {
    return this.server.url;
  }

  get requests(): readonly ApiRequest[] {
    return this.server.requests;
  }

  get violations(): readonly string[] {
    return this.server.violations;
  }

  /** The contract violations found since the last call (a test asserts them empty). */
  takeViolations(): string[] {
    return this.server.violations.splice(0);
  }

  protected violation(problem: string): void {
    this.server.violations.push(problem);
  }

  fail(fault: Fault): void {
    this.server.fail(fault);
  }

  clearFaults(): void {
    this.server.clearFaults();
  }

  /** Registers a webhook: every later event is POSTed to `url`, signed with `secret`. */
  addWebhook(url: string, secret: string): void {
    this.#hooks.push({ url, secret });
  }

  /** The next `count` deliveries are lost on their way (polling has to catch them up). */
  loseWebhooks(count = 1): void {
    this.#lose += count;
  }

  /** Waits until every delivery sent so far was answered. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  protected deliver(payload: unknown, deliveryId: string): void {
    const body = JSON.stringify(payload);
    for (const hook of this.#hooks) {
      const headers = { "content-type": "application/json", ...this.#signer(body, hook.secret, deliveryId) };
      const delivery: TrackerDelivery = { url: hook.url, headers, body, status: 0 };
      this.deliveries.push(delivery);
      if (this.#lose > 0) {
        this.#lose -= 1;
        continue;
      }
      const sending = fetch(hook.url, { method: "POST", headers, body })
        .then(async (response) => {
          delivery.status = response.status;
          await response.body?.cancel();
        })
        .catch(() => undefined)
        .finally(() => this.#pending.delete(sending));
      this.#pending.add(sending);
    }
  }

  start(): Promise<void> {
    return this.server.start();
  }

  async close(): Promise<void> {
    await this.settled().catch(() => undefined);
    await this.server.close();
  }
}
