// The Earshot client: openapi-fetch over the types openapi-typescript generates from
// api/openapi.json (src/schema.ts, generated: do not edit; regenerate with clients/generate.sh).
// Added here: the bearer token, and stricter types for the methods that send a body (below).
// Every path, parameter, body and answer is typed from the OpenAPI document.
import createClient, { type Client, type ClientOptions, type FetchOptions, type FetchResponse } from "openapi-fetch";
import type {
  HttpMethod,
  IsOperationRequestBodyOptional,
  OperationRequestBodyContent,
  PathsWithMethod,
  RequiredKeysOf,
} from "openapi-typescript-helpers";
import type { components, operations, paths } from "./schema.js";

export type { components, operations, paths };
/** The document's schemas by name: `Schemas["CheckResponse"]`, `Schemas["NewItem"]`, … */
export type Schemas = components["schemas"];
/** The error body every non-2xx answer carries: `{"error": {"code", "message", "details"}}`. */
export type ApiError = Schemas["Error"];

/** A request body exactly as the document's schema says (not through openapi-fetch's `Writable`). */
type ExactBodyOption<Op> = [OperationRequestBodyContent<Op>] extends [never]
  ? { body?: never }
  : IsOperationRequestBodyOptional<Op> extends true
    ? { body?: OperationRequestBodyContent<Op> }
    : { body: OperationRequestBodyContent<Op> };

/** openapi-fetch's options of one operation (params, headers, parseAs, …) with the exact body. */
export type ExactFetchOptions<Op> = Omit<FetchOptions<Op>, "body"> & ExactBodyOption<Op>;

/** The options argument: required when the operation has a required parameter or body. */
type ExactInit<Op> =
  RequiredKeysOf<ExactFetchOptions<Op>> extends never ? [init?: ExactFetchOptions<Op>] : [init: ExactFetchOptions<Op>];

/**
 * `POST`, `PUT`, `PATCH`, `DELETE` with the options typed once the path is known, rather than
 * inferred from the argument as openapi-fetch does. openapi-fetch checks an inferred options type
 * against the operation's only as a constraint, through `Writable<T>` (whose `& {}` disables the
 * weak-type check) and with an index signature `[key: string]: unknown` added, so an inline body
 * with an unknown field or `origin: "everyone"` compiles. Here the options argument is an object
 * literal checked against the operation's own types: unknown fields, and a string where a schema
 * of only optional properties is expected, are compile errors.
 */
export type ExactMethod<M extends HttpMethod> = <P extends PathsWithMethod<paths, M>>(
  url: P,
  ...init: ExactInit<Operation<P, M>>
) => Promise<FetchResponse<Operation<P, M>, ExactFetchOptions<Operation<P, M>>, "application/json">>;

/** The operation of a path and method (`never` when the path has no such method). */
type Operation<P extends keyof paths, M extends HttpMethod> = Extract<paths[P][M], Record<string | number, any>>;

/** openapi-fetch's client of the document, with exact bodies (`ExactMethod`). */
export type EarshotClient = Omit<Client<paths, "application/json">, "POST" | "PUT" | "PATCH" | "DELETE"> & {
  /** Call a POST endpoint */
  POST: ExactMethod<"post">;
  /** Call a PUT endpoint */
  PUT: ExactMethod<"put">;
  /** Call a PATCH endpoint */
  PATCH: ExactMethod<"patch">;
  /** Call a DELETE endpoint */
  DELETE: ExactMethod<"delete">;
};

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
  // The same object: only the types of the body-sending methods are narrower.
  return client as EarshotClient;
}
