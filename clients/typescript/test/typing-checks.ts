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
  // Not refused inline: openapi-fetch passes bodies through `Writable<T>`, whose `& {}` turns off
  // TypeScript's weak-type check, so a schema of only optional properties (Viewers, hence Origin)
  // accepts any string at the call site. Annotating the body (as above) restores the check.
  await client.POST("/v1/stores/{store}/items", { ...store, body: { owner: "owner", origin: "everyone" } });
  // Not refused inline either, for the same reason: an unknown field (the server answers 400).
  await client.POST("/v1/stores/{store}/check", { ...store, body: { item: "f1", bogus: 1 } });
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
