from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...types import UNSET, Response, Unset


def _get_kwargs(
    store: str,
    *,
    after: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["after"] = after

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/stores/{store}/watch".format(
            store=quote(str(store), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | str | None:
    if response.status_code == 200:
        response_200 = response.text
        return response_200

    if response.status_code == 400:
        response_400 = Error.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Error.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = Error.from_dict(response.json())

        return response_404

    if response.status_code == 410:
        response_410 = Error.from_dict(response.json())

        return response_410

    if response.status_code == 500:
        response_500 = Error.from_dict(response.json())

        return response_500

    if response.status_code == 503:
        response_503 = Error.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Error | str]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    store: str,
    *,
    client: AuthenticatedClient | Client,
    after: str | Unset = UNSET,
) -> Response[Error | str]:
    """Stream every change after a revision

     Needs the `reader` scope. Streams every revision of the store after `after`, in order, one event per
    revision: newline-delimited JSON by default, server-sent events when the request accepts
    `text/event-stream` (the event id is the revision's token, and `Last-Event-ID` resumes). Events come
    from the store's revision log in the datastore, so every replica streams the same events for the
    same revisions. Each event names the kind of change and the ids it touched, never content. An idle
    stream sends a heartbeat every 15 s carrying the token to resume from. Without `after` the stream
    starts at the newest revision. A start older than the log keeps (`log_retention` revisions) is
    refused with `revision_expired`: read the current state and watch from its token. An error after the
    stream started is sent as one last line in the error shape, and the stream ends; it also ends when
    the server drains.

    Args:
        store (str):
        after (str | Unset): Opaque consistency token naming one revision of one store (currently
            `<revision>.<16 hex digits>`). Pass it back as `at_least` or `at_exact`; a malformed token
            is refused with `invalid_consistency_token`, a token of another store with
            `consistency_token_store_mismatch`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | str]
    """

    kwargs = _get_kwargs(
        store=store,
        after=after,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    store: str,
    *,
    client: AuthenticatedClient | Client,
    after: str | Unset = UNSET,
) -> Error | str | None:
    """Stream every change after a revision

     Needs the `reader` scope. Streams every revision of the store after `after`, in order, one event per
    revision: newline-delimited JSON by default, server-sent events when the request accepts
    `text/event-stream` (the event id is the revision's token, and `Last-Event-ID` resumes). Events come
    from the store's revision log in the datastore, so every replica streams the same events for the
    same revisions. Each event names the kind of change and the ids it touched, never content. An idle
    stream sends a heartbeat every 15 s carrying the token to resume from. Without `after` the stream
    starts at the newest revision. A start older than the log keeps (`log_retention` revisions) is
    refused with `revision_expired`: read the current state and watch from its token. An error after the
    stream started is sent as one last line in the error shape, and the stream ends; it also ends when
    the server drains.

    Args:
        store (str):
        after (str | Unset): Opaque consistency token naming one revision of one store (currently
            `<revision>.<16 hex digits>`). Pass it back as `at_least` or `at_exact`; a malformed token
            is refused with `invalid_consistency_token`, a token of another store with
            `consistency_token_store_mismatch`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | str
    """

    return sync_detailed(
        store=store,
        client=client,
        after=after,
    ).parsed


async def asyncio_detailed(
    store: str,
    *,
    client: AuthenticatedClient | Client,
    after: str | Unset = UNSET,
) -> Response[Error | str]:
    """Stream every change after a revision

     Needs the `reader` scope. Streams every revision of the store after `after`, in order, one event per
    revision: newline-delimited JSON by default, server-sent events when the request accepts
    `text/event-stream` (the event id is the revision's token, and `Last-Event-ID` resumes). Events come
    from the store's revision log in the datastore, so every replica streams the same events for the
    same revisions. Each event names the kind of change and the ids it touched, never content. An idle
    stream sends a heartbeat every 15 s carrying the token to resume from. Without `after` the stream
    starts at the newest revision. A start older than the log keeps (`log_retention` revisions) is
    refused with `revision_expired`: read the current state and watch from its token. An error after the
    stream started is sent as one last line in the error shape, and the stream ends; it also ends when
    the server drains.

    Args:
        store (str):
        after (str | Unset): Opaque consistency token naming one revision of one store (currently
            `<revision>.<16 hex digits>`). Pass it back as `at_least` or `at_exact`; a malformed token
            is refused with `invalid_consistency_token`, a token of another store with
            `consistency_token_store_mismatch`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | str]
    """

    kwargs = _get_kwargs(
        store=store,
        after=after,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    store: str,
    *,
    client: AuthenticatedClient | Client,
    after: str | Unset = UNSET,
) -> Error | str | None:
    """Stream every change after a revision

     Needs the `reader` scope. Streams every revision of the store after `after`, in order, one event per
    revision: newline-delimited JSON by default, server-sent events when the request accepts
    `text/event-stream` (the event id is the revision's token, and `Last-Event-ID` resumes). Events come
    from the store's revision log in the datastore, so every replica streams the same events for the
    same revisions. Each event names the kind of change and the ids it touched, never content. An idle
    stream sends a heartbeat every 15 s carrying the token to resume from. Without `after` the stream
    starts at the newest revision. A start older than the log keeps (`log_retention` revisions) is
    refused with `revision_expired`: read the current state and watch from its token. An error after the
    stream started is sent as one last line in the error shape, and the stream ends; it also ends when
    the server drains.

    Args:
        store (str):
        after (str | Unset): Opaque consistency token naming one revision of one store (currently
            `<revision>.<16 hex digits>`). Pass it back as `at_least` or `at_exact`; a malformed token
            is refused with `invalid_consistency_token`, a token of another store with
            `consistency_token_store_mismatch`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | str
    """

    return (
        await asyncio_detailed(
            store=store,
            client=client,
            after=after,
        )
    ).parsed
