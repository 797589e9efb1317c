// Type-level checks of the generated client, compiled by `tsc` (clients/typescript/test.sh) and
// never called. Each `@ts-expect-error` marks a misuse the client's types must refuse; if the
// generated types lost their precision (`any` bodies, unchecked paths), the directive would be
// unused, which is itself a compile error.
import type { EarshotClient, Schemas } from "../src/index.js";

export async function misuses(client: EarshotClient): Promise<void> {
  const store = { params: { path: { store: "demo" } } } as const;
  // @ts-expect-error an unknown path
  await client.POST("/v1/stores/{store}/no-such-route", store);
  // @ts-expect-error the path parameter is required
  await client.POST("/v1/stores/{store}/check", { body: { item: "f1" } });
  // @ts-expect-error the origin is `public`, `owner_private` or viewers
  const item: Schemas["NewItem"] = { owner: "owner", origin: "everyone" };
  // Inline bodies, the documented way of calling: checked against the operation's own schema
  // (src/index.ts `ExactMethod`; openapi-fetch's own `Client` lets all of these through).
  // @ts-expect-error the origin is `public`, `owner_private` or viewers, also inline
  await client.POST("/v1/stores/{store}/items", { ...store, body: { owner: "owner", origin: "everyone" } });
  // @ts-expect-error an unknown field of an inline body (the server answers 400)
  await client.POST("/v1/stores/{store}/check", { ...store, body: { item: "f1", bogus: 1 } });
  await client.POST("/v1/stores/{store}/check", {
    ...store,
    // @ts-expect-error an unknown field nested in an inline body
    body: { item: "f1", container: { owner: "owner", viewers: { participants: ["bob"], everyone: true } } },
  });
  // @ts-expect-error an unknown field of an inline body of a PUT
  await client.PUT("/v1/stores/{store}/schema", { ...store, body: { schema: "", bogus: 1 } });
  // @ts-expect-error an unknown option beside the body
  await client.POST("/v1/stores/{store}/check", { ...store, body: { item: "f1" }, bogus: 1 });
  // @ts-expect-error the body is required
  await client.POST("/v1/stores/{store}/check", { ...store });
  // @ts-expect-error annotated, it is
  const checkRequest: Schemas["CheckRequest"] = { item: "f1", bogus: 1 };
  // @ts-expect-error `owner` is required
  await client.POST("/v1/stores/{store}/items", { ...store, body: { origin: "public" } });
  // @ts-expect-error a participant's kind is person, agent or device
  await client.POST("/v1/stores/{store}/participants", { ...store, body: { id: "bob", kind: "robot" } });
  // @ts-expect-error unknown fields are refused (the schema says additionalProperties: false)
  const viewers: Schemas["Viewers"] = { participants: ["bob"], everyone: true };
  // @ts-expect-error a consistency is latest, fully_consistent, {at_least} or {at_exact}
  const consistency: Schemas["Consistency"] = "eventually";

  // Well-formed calls of every body-sending method compile, with their parameters and headers.
  await client.POST("/v1/stores/{store}/items", { ...store, body: { owner: "owner", origin: "owner_private" } });
  await client.POST("/v1/stores/{store}/items", {
    params: { path: { store: "demo" }, header: { "Idempotency-Key": "k1" } },
    body: { id: "f1", owner: "owner", origin: { participants: ["bob"] } },
  });
  await client.PUT("/v1/stores/{store}/schema", { ...store, body: { schema: "relation family { opens medication/** }" } });
  await client.DELETE("/v1/stores/{store}/capabilities/{capability}", {
    params: { path: { store: "demo", capability: "g" }, query: { by: "me" } },
  });
  // @ts-expect-error a revocation says who revokes
  await client.DELETE("/v1/stores/{store}/capabilities/{capability}", { params: { path: { store: "demo", capability: "g" } } });
  const watched = await client.GET("/v1/stores/{store}/watch", { ...store, parseAs: "stream" });
  const stream: ReadableStream<Uint8Array> | null | undefined = watched.data;
  void stream;

  const { data } = await client.POST("/v1/stores/{store}/check", {
    ...store,
    body: { item: "f1", container: { owner: "owner" } },
  });
  if (data) {
    const admitted: boolean = data.admitted;
    const reason: Schemas["Reason"] = data.reason;
    // @ts-expect-error `admitted` is a boolean
    const notAString: string = data.admitted;
    // @ts-expect-error no such field on a check's answer
    void data.no_such_field;
    void [admitted, reason, notAString];
  }
  void [item, checkRequest, viewers, consistency];
}
