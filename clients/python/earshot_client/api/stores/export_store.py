from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...types import Response


def _get_kwargs(
    store: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/stores/{store}/export".format(
            store=quote(str(store), safe=""),
        ),
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | None:
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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Error]:
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
) -> Response[Error]:
    """Export the whole store as NDJSON

     Needs the `admin` scope on the store. Streams every durable record of the store at one revision, the
    one it opened at, named in the header: a header line (`ExportHeader`: the store's revision record),
    one `ExportRecord` line per record in key order (the record's JSON verbatim; kinds `participant`,
    `identity`, `audience`, `item`, `content`, `grant`, `schema`, `device`, `relation`, `capability`,
    `idempotency_key`, `item_digest`), and an end line `{"earshot_export_end": {"records",
    "revision"}}`. The revision log and sealed contexts are not exported: an imported store starts a
    fresh log at the exported revision. Writes to the store go on while the export runs and do not show
    in it (the export pins the records of its revision). A failure after the stream started (the
    datastore failed; on a shared datastore, another replica committed to the store meanwhile; more than
    256 MiB of records written during the export) ends the stream with one line in the error shape
    (`write_conflict`, safe to retry, or a storage code) in place of the end line, and an import refuses
    it. Not bounded by the request timeout: the export ends (without its end line) when the client takes
    no chunk for `stream_idle_timeout_ms`. Feed the body to `POST /v1/stores/{store}/import` (or
    `earshot import`).

    Args:
        store (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error]
    """

    kwargs = _get_kwargs(
        store=store,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    store: str,
    *,
    client: AuthenticatedClient | Client,
) -> Error | None:
    """Export the whole store as NDJSON

     Needs the `admin` scope on the store. Streams every durable record of the store at one revision, the
    one it opened at, named in the header: a header line (`ExportHeader`: the store's revision record),
    one `ExportRecord` line per record in key order (the record's JSON verbatim; kinds `participant`,
    `identity`, `audience`, `item`, `content`, `grant`, `schema`, `device`, `relation`, `capability`,
    `idempotency_key`, `item_digest`), and an end line `{"earshot_export_end": {"records",
    "revision"}}`. The revision log and sealed contexts are not exported: an imported store starts a
    fresh log at the exported revision. Writes to the store go on while the export runs and do not show
    in it (the export pins the records of its revision). A failure after the stream started (the
    datastore failed; on a shared datastore, another replica committed to the store meanwhile; more than
    256 MiB of records written during the export) ends the stream with one line in the error shape
    (`write_conflict`, safe to retry, or a storage code) in place of the end line, and an import refuses
    it. Not bounded by the request timeout: the export ends (without its end line) when the client takes
    no chunk for `stream_idle_timeout_ms`. Feed the body to `POST /v1/stores/{store}/import` (or
    `earshot import`).

    Args:
        store (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error
    """

    return sync_detailed(
        store=store,
        client=client,
    ).parsed


async def asyncio_detailed(
    store: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Error]:
    """Export the whole store as NDJSON

     Needs the `admin` scope on the store. Streams every durable record of the store at one revision, the
    one it opened at, named in the header: a header line (`ExportHeader`: the store's revision record),
    one `ExportRecord` line per record in key order (the record's JSON verbatim; kinds `participant`,
    `identity`, `audience`, `item`, `content`, `grant`, `schema`, `device`, `relation`, `capability`,
    `idempotency_key`, `item_digest`), and an end line `{"earshot_export_end": {"records",
    "revision"}}`. The revision log and sealed contexts are not exported: an imported store starts a
    fresh log at the exported revision. Writes to the store go on while the export runs and do not show
    in it (the export pins the records of its revision). A failure after the stream started (the
    datastore failed; on a shared datastore, another replica committed to the store meanwhile; more than
    256 MiB of records written during the export) ends the stream with one line in the error shape
    (`write_conflict`, safe to retry, or a storage code) in place of the end line, and an import refuses
    it. Not bounded by the request timeout: the export ends (without its end line) when the client takes
    no chunk for `stream_idle_timeout_ms`. Feed the body to `POST /v1/stores/{store}/import` (or
    `earshot import`).

    Args:
        store (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error]
    """

    kwargs = _get_kwargs(
        store=store,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    store: str,
    *,
    client: AuthenticatedClient | Client,
) -> Error | None:
    """Export the whole store as NDJSON

     Needs the `admin` scope on the store. Streams every durable record of the store at one revision, the
    one it opened at, named in the header: a header line (`ExportHeader`: the store's revision record),
    one `ExportRecord` line per record in key order (the record's JSON verbatim; kinds `participant`,
    `identity`, `audience`, `item`, `content`, `grant`, `schema`, `device`, `relation`, `capability`,
    `idempotency_key`, `item_digest`), and an end line `{"earshot_export_end": {"records",
    "revision"}}`. The revision log and sealed contexts are not exported: an imported store starts a
    fresh log at the exported revision. Writes to the store go on while the export runs and do not show
    in it (the export pins the records of its revision). A failure after the stream started (the
    datastore failed; on a shared datastore, another replica committed to the store meanwhile; more than
    256 MiB of records written during the export) ends the stream with one line in the error shape
    (`write_conflict`, safe to retry, or a storage code) in place of the end line, and an import refuses
    it. Not bounded by the request timeout: the export ends (without its end line) when the client takes
    no chunk for `stream_idle_timeout_ms`. Feed the body to `POST /v1/stores/{store}/import` (or
    `earshot import`).

    Args:
        store (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error
    """

    return (
        await asyncio_detailed(
            store=store,
            client=client,
        )
    ).parsed
