import SwaggerUIBundle from "swagger-ui-dist/swagger-ui-bundle.js";
import "swagger-ui-dist/swagger-ui.css";
import "./docs.css";
import { getToken } from "./lib/token-store.ts";

/**
 * The API reference: Swagger UI (bundled from the swagger-ui-dist package, no CDN) rendering
 * /openapi.json. The document needs a read token: the one this tab signed in with on the app,
 * sent as a bearer header on every request Swagger UI makes ("Try it out" included).
 */
const message = document.getElementById("docs-message");
const token = getToken();
if (!token && message) {
  message.textContent = "Sign in on the app first (the API document needs a read token).";
}
SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger",
  deepLinking: false,
  requestInterceptor: (req: { headers: Record<string, string> }) => {
    const t = getToken();
    if (t) req.headers.Authorization = `Bearer ${t}`;
    return req;
  },
});
