import { createHmac, timingSafeEqual } from "node:crypto";
import { ApiError } from "../../http/api-error.ts";

/** Slack refuses replays older than this; so does the gateway (Slack's "Verifying requests from Slack"). */
export const SLACK_MAX_AGE_SECONDS = 5 * 60;

/**
 * Checks a request the way Slack documents it ("Verifying requests from Slack"): the
 * `X-Slack-Request-Timestamp` is at most {@link SLACK_MAX_AGE_SECONDS} from now, and
 * `X-Slack-Signature` is `v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<raw body>` keyed with the
 * app's signing secret, compared in constant time. Throws a 401 naming what failed.
 */
export function verifySlackSignature(input: {
  secret: string;
  body: string;
  timestamp: string | undefined;
  signature: string | undefined;
  nowSeconds?: number;
}): void {
  const { timestamp, signature } = input;
  if (!timestamp || !signature) {
    throw refused(
      "bad_signature",
      "A Slack request needs X-Slack-Request-Timestamp and X-Slack-Signature headers; nothing was done.",
    );
  }
  const seconds = /^\d{1,12}$/.test(timestamp) ? Number(timestamp) : Number.NaN;
  const now = input.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (!Number.isFinite(seconds) || Math.abs(now - seconds) > SLACK_MAX_AGE_SECONDS) {
    throw refused(
      "stale_request",
      `The Slack request's X-Slack-Request-Timestamp (${timestamp.slice(0, 20)}) is more than ${SLACK_MAX_AGE_SECONDS} s from the gateway's clock: refused as a possible replay; nothing was done. Check the gateway host's clock if every click fails this way.`,
      { timestamp: timestamp.slice(0, 20), max_age_seconds: SLACK_MAX_AGE_SECONDS },
    );
  }
  const expected = Buffer.from(
    `v0=${createHmac("sha256", input.secret).update(`v0:${timestamp}:${input.body}`).digest("hex")}`,
  );
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    throw refused(
      "bad_signature",
      "The Slack request's X-Slack-Signature does not match OVERSEER_SLACK_SIGNING_SECRET; nothing was done. Set it to the Slack app's signing secret (Basic Information → App Credentials).",
    );
  }
}

function refused(code: string, message: string, details: Record<string, unknown> = {}): ApiError {
  return new ApiError(401, code, message, details);
}
