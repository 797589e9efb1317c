// The Earshot client: openapi-fetch over the types openapi-typescript generates from
// api/openapi.json (src/schema.ts, generated: do not edit; regenerate with clients/generate.sh).
// Only the bearer token is added here; every path, parameter, body and answer is typed from the
// OpenAPI document.
import createClient, { type Client, type ClientOptions } from "openapi-fetch";
import type { components, operations, paths } from "./schema.js";

export type { components, operations, paths };
/** The document's schemas by name: `Schemas["CheckResponse"]`, `Schemas["NewItem"]`, … */
export type Schemas = components["schemas"];
/** The error body every non-2xx answer carries: `{"error": {"code", "message", "details"}}`. */
export type ApiError = Schemas["Error"];
export type EarshotClient = Client<paths, "application/json">;

export interface EarshotClientOptions extends ClientOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:7878`. */
  baseUrl: string;
  /** A bearer token of the service's `[[tokens]]`; omit when authentication is off. */
  token?: string;
}

/** A typed client: `client.POST("/v1/stores/{store}/check", { params: { path: { store } }, body })`. */
export function createEarshotClient({ token, ...options }: EarshotClientOptions): EarshotClient {
  const client = createClient<paths>(options);
  if (token !== undefined) {
    client.use({
      onRequest({ request }) {
        request.headers.set("Authorization", `Bearer ${token}`);
        return request;
      },
    });
  }
  return client;
}
