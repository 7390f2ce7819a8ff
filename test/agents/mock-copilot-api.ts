/**
 * The model side of GitHub Copilot CLI's bring-your-own-key provider, for the real-CLI suite:
 * with `COPILOT_PROVIDER_BASE_URL` (what `overseer init --agent copilot --base-url URL` writes),
 * `COPILOT_PROVIDER_TYPE=openai` and `COPILOT_PROVIDER_WIRE_API=responses`, the CLI posts every
 * turn to `BASE/responses` (OpenAI Responses API, streamed) with the key as a bearer token, and
 * needs no GitHub sign-in (`COPILOT_OFFLINE=true` keeps it off GitHub entirely).
 *
 * Served under {@link COPILOT_BASE_PATH} by mock-model-server.ts; the turns themselves are the
 * Responses protocol of mock-responses-protocol.ts with Copilot's `bash` tool.
 */

/** Path prefix of the Copilot provider on the mock server (the base URL is ORIGIN + this). */
export const COPILOT_BASE_PATH = "/copilot/v1";

/** A key the gateway refuses: answered 401 with OpenAI's error body, as a real gateway does. */
export const COPILOT_REFUSED_KEY = "sk-refused-by-the-gateway-0123456789";

/** The 401 body for a request carrying {@link COPILOT_REFUSED_KEY}, else null. */
export function copilotRefusal(authorization: string | undefined): string | null {
  if (authorization !== `Bearer ${COPILOT_REFUSED_KEY}`) return null;
  return JSON.stringify({
    error: {
      message: "Incorrect API key provided.",
      type: "invalid_request_error",
      param: null,
      code: "invalid_api_key",
    },
  });
}
