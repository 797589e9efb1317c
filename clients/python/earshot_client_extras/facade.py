"""A small typed façade over the generated client: each call returns its success type or raises
`EarshotError`, never `Error | X | None`.

    from earshot_client.models import CheckRequest, Container, NewItem, OriginKeyword, Viewers
    from earshot_client_extras import Earshot, EarshotError

    with Earshot("http://127.0.0.1:7878", token="…") as earshot:
        earshot.create_item("demo", NewItem(id="p1", owner="owner", origin=OriginKeyword.PUBLIC))
        try:
            answer = earshot.check("demo", CheckRequest(item="f2", container=Container(owner="owner")))
        except EarshotError as e:       # any error answer: e.status, e.code, e.message, e.details
            ...
        print(answer.admitted, answer.reason)

The bodies and answers are the generated models (`earshot_client.models`). Any other operation:
call the generated module with `earshot.client` and pass its `sync_detailed` answer to `unwrap`,
which returns the success model or raises `EarshotError` the same way:

    from earshot_client.api.items import expand_item
    audiences = unwrap(expand_item.sync_detailed("demo", "f2", client=earshot.client))

The façade builds each request with the generated module's own `_get_kwargs` (so the path,
headers and body are exactly the generated client's) and reads the answer itself: an error answer
whose code is newer than the client is raised as `EarshotError` with the code as a plain string,
where the generated parser would raise `ValueError`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import quote

import httpx

from earshot_client import AuthenticatedClient, Client
from earshot_client.api.devices import authorize
from earshot_client.api.grants import grant_item
from earshot_client.api.items import create_item
from earshot_client.api.participants import bind_identity, create_participant
from earshot_client.api.reads import check, lookup
from earshot_client.api.stores import create_store
from earshot_client.models import (
    AuthorizeRequest,
    AuthorizeResponse,
    CheckRequest,
    CheckResponse,
    Error,
    ErrorErrorCode,
    LookupRequest,
    LookupResponse,
    NewGrant,
    NewIdentity,
    NewItem,
    NewParticipant,
    NewStore,
    WatchChange,
    WatchHeartbeat,
    WriteOutcome,
)
from earshot_client.types import UNSET, Response, Unset
from earshot_client_extras.watch import parse_watch_event

T = TypeVar("T")

UNEXPECTED_RESPONSE = "unexpected_response"
"""`EarshotError.code` of an answer that is not the service's error body (a proxy's 502 page, …)."""


class EarshotError(Exception):
    """An error answer: its stable `code` (an `ErrorErrorCode` when this client knows it, else the
    code as a string; `ErrorErrorCode` is a `StrEnum`, so `e.code == "store_not_found"` holds
    either way), the human-readable `message`, the structured `details` and the HTTP `status`."""

    code: ErrorErrorCode | str
    message: str
    details: dict[str, Any]
    status: int

    def __init__(self, code: ErrorErrorCode | str, message: str, details: Mapping[str, Any], status: int) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.code = code
        self.message = message
        self.details = dict(details)
        self.status = status

    @classmethod
    def from_error(cls, error: Error, status: int) -> EarshotError:
        """From the generated `Error` model of an answer."""
        return cls(error.error.code, error.error.message, error.error.details.to_dict(), status)

    @classmethod
    def from_body(cls, content: bytes, status: int) -> EarshotError:
        """From an answer's raw body: the service's `{"error": {"code", "message", "details"}}`,
        or anything else as code `unexpected_response`."""
        try:
            data = json.loads(content)
        except ValueError:
            data = None
        error = data.get("error") if isinstance(data, dict) else None
        if not isinstance(error, dict) or not isinstance(error.get("code"), str):
            text = content.decode("utf-8", "replace")[:200]
            return cls(UNEXPECTED_RESPONSE, f"not an Earshot error body: {text!r}", {}, status)
        code: ErrorErrorCode | str = error["code"]
        try:
            code = ErrorErrorCode(code)
        except ValueError:
            pass  # a code newer than this client: kept as the string it is
        message = error.get("message")
        details = error.get("details")
        return cls(
            code,
            message if isinstance(message, str) else "",
            details if isinstance(details, dict) else {},
            status,
        )


def unwrap(response: Response[T | Error]) -> T:
    """The success model of a generated `sync_detailed` answer; `EarshotError` for any other."""
    parsed = response.parsed
    if isinstance(parsed, Error):
        raise EarshotError.from_error(parsed, response.status_code)
    if parsed is None or not 200 <= response.status_code < 300:
        raise EarshotError.from_body(response.content, response.status_code)
    return parsed


def _key(idempotency_key: str | None) -> str | Unset:
    return UNSET if idempotency_key is None else idempotency_key


class Earshot:
    """The service at `base_url`, with a bearer `token` (none when authentication is off)."""

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        client: AuthenticatedClient | Client | None = None,
    ) -> None:
        if client is None:
            t = httpx.Timeout(timeout)
            if token is None:
                client = Client(base_url=base_url, timeout=t)
            else:
                client = AuthenticatedClient(base_url=base_url, token=token, timeout=t)
        self.client: AuthenticatedClient | Client = client
        """The generated client, for every operation the façade has no method for (see `unwrap`)."""

    def close(self) -> None:
        self.client.get_httpx_client().close()

    def __enter__(self) -> Earshot:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def _send(self, request: dict[str, Any], parse: Callable[[Mapping[str, Any]], T]) -> T:
        response = self.client.get_httpx_client().request(**request)
        if not 200 <= response.status_code < 300:
            raise EarshotError.from_body(response.content, response.status_code)
        return parse(response.json())

    # Writes: `WriteOutcome` (its `token` is the write's revision, for a later read's `at_least`).

    def create_store(self, body: NewStore) -> WriteOutcome:
        return self._send(create_store._get_kwargs(body=body), WriteOutcome.from_dict)

    def create_participant(
        self, store: str, body: NewParticipant, *, idempotency_key: str | None = None
    ) -> WriteOutcome:
        request = create_participant._get_kwargs(store, body=body, idempotency_key=_key(idempotency_key))
        return self._send(request, WriteOutcome.from_dict)

    def bind_identity(self, store: str, body: NewIdentity, *, idempotency_key: str | None = None) -> WriteOutcome:
        request = bind_identity._get_kwargs(store, body=body, idempotency_key=_key(idempotency_key))
        return self._send(request, WriteOutcome.from_dict)

    def create_item(self, store: str, body: NewItem, *, idempotency_key: str | None = None) -> WriteOutcome:
        request = create_item._get_kwargs(store, body=body, idempotency_key=_key(idempotency_key))
        return self._send(request, WriteOutcome.from_dict)

    def grant(self, store: str, item: str, body: NewGrant, *, idempotency_key: str | None = None) -> WriteOutcome:
        request = grant_item._get_kwargs(store, item, body=body, idempotency_key=_key(idempotency_key))
        return self._send(request, WriteOutcome.from_dict)

    # Reads: decisions, allowed or not, are answers; only refusals raise.

    def check(self, store: str, body: CheckRequest) -> CheckResponse:
        return self._send(check._get_kwargs(store, body=body), CheckResponse.from_dict)

    def lookup(self, store: str, body: LookupRequest) -> LookupResponse:
        return self._send(lookup._get_kwargs(store, body=body), LookupResponse.from_dict)

    def authorize(self, store: str, body: AuthorizeRequest) -> AuthorizeResponse:
        return self._send(authorize._get_kwargs(store, body=body), AuthorizeResponse.from_dict)

    def watch(self, store: str, after: str | None = None) -> Iterator[WatchChange | WatchHeartbeat]:
        """Every change of `store` after the token `after` (from now on without it) as it is
        committed, with heartbeats while none is; stop iterating to close the stream. A refusal
        (before the stream starts, or the stream's final error line) raises `EarshotError`."""
        params = {"after": after} if after is not None else {}
        url = f"/v1/stores/{quote(store, safe='')}/watch"
        headers = {"accept": "application/x-ndjson"}
        with self.client.get_httpx_client().stream("GET", url, params=params, headers=headers) as r:
            if r.status_code != 200:
                raise EarshotError.from_body(r.read(), r.status_code)
            for line in r.iter_lines():
                if not line.strip():
                    continue
                data = json.loads(line)
                if isinstance(data, dict) and "error" in data:  # the stream's final line
                    raise EarshotError.from_body(line.encode(), r.status_code)
                event = parse_watch_event(line)
                if isinstance(event, Error):  # not reached: an error line raised above
                    raise EarshotError.from_error(event, r.status_code)
                yield event
