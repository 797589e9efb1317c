"""The watch stream as typed events: each NDJSON line of `GET /v1/stores/{store}/watch` parsed into
the generated model it is (`WatchChange`, `WatchHeartbeat` or `Error`; the `WatchEvent` schema of
api/openapi.json is their union).

    from earshot_client_extras.watch import watch
    from earshot_client.models import WatchChange

    for event in watch(client, "demo", after=token):
        if isinstance(event, WatchChange):
            print(event.revision, event.change.kind)
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from earshot_client import AuthenticatedClient, Client
from earshot_client.models import Error, WatchChange, WatchHeartbeat

WatchEvent = WatchChange | WatchHeartbeat | Error
"""One line of a watch stream (the `WatchEvent` schema)."""


def parse_watch_event(line: str | bytes) -> WatchEvent:
    """Parses one line of a watch stream into its generated model; `ValueError` if it is none."""
    data = json.loads(line)
    if not isinstance(data, dict):
        raise ValueError("a watch line is a JSON object")
    if "heartbeat" in data:
        return WatchHeartbeat.from_dict(data)
    if "error" in data:
        return Error.from_dict(data)
    if "revision" in data and "change" in data:
        return WatchChange.from_dict(data)
    raise ValueError(f"not a watch event: {sorted(data)}")


def watch(client: AuthenticatedClient | Client, store: str, after: str | None = None) -> Iterator[WatchEvent]:
    """Every change of `store` after the token `after` (from now on without it) as it is
    committed, with heartbeats while none is; stop iterating to close the stream.
    A refusal before the stream starts (401, 404, `revision_expired`, ...) is yielded as the
    typed `Error`, after which the iterator ends."""
    params = {"after": after} if after is not None else {}
    url = f"/v1/stores/{store}/watch"
    with client.get_httpx_client().stream("GET", url, params=params, headers={"accept": "application/x-ndjson"}) as r:
        if r.status_code != 200:
            r.read()
            yield Error.from_dict(r.json())
            return
        for line in r.iter_lines():
            if line.strip():
                yield parse_watch_event(line)
