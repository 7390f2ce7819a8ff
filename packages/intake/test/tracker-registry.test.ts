import { describe, expect, it } from "vitest";
import {
  createTrackerAdapter,
  registeredTrackerKinds,
  TRACKER_KINDS,
  trackerWebhookVerifier,
} from "../src/index.ts";

describe("the tracker registry", () => {
  it("registers only known kinds, each once", () => {
    const kinds = registeredTrackerKinds();
    expect(kinds.every((kind) => (TRACKER_KINDS as readonly string[]).includes(kind))).toBe(true);
    expect(new Set(kinds).size).toBe(kinds.length);
  });

  it("refuses a kind with no adapter, naming the ones there are", () => {
    const missing = TRACKER_KINDS.filter((kind) => !registeredTrackerKinds().includes(kind));
    for (const kind of missing) {
      expect(() => createTrackerAdapter({ kind, container: "acme/app", token: "t" })).toThrow(
        `no tracker adapter for "${kind}"`,
      );
      expect(() => trackerWebhookVerifier(kind)).toThrow(/use one of the registered kinds/);
    }
  });
});
