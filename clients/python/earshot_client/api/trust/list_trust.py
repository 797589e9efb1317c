from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.list_trust_consistency import ListTrustConsistency
from ...models.list_trust_live import ListTrustLive
from ...models.trust_page import TrustPage
from ...types import UNSET, Response, Unset


def _get_kwargs(
    store: str,
    *,
    owner: str | Unset = UNSET,
    participant: str | Unset = UNSET,
    live: ListTrustLive | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: ListTrustConsistency | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["owner"] = owner

    params["participant"] = participant

    json_live: str | Unset = UNSET
    if not isinstance(live, Unset):
        json_live = live.value

    params["live"] = json_live

    params["limit"] = limit

    params["cursor"] = cursor

    params["at_least"] = at_least

    params["at_exact"] = at_exact

    json_consistency: str | Unset = UNSET
    if not isinstance(consistency, Unset):
        json_consistency = consistency.value

    params["consistency"] = json_consistency

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/stores/{store}/trust".format(
            store=quote(str(store), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | TrustPage | None:
    if response.status_code == 200:
        response_200 = TrustPage.from_dict(response.json())

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

    if response.status_code == 503:
        response_503 = Error.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Error | TrustPage]:
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
    owner: str | Unset = UNSET,
    participant: str | Unset = UNSET,
    live: ListTrustLive | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: ListTrustConsistency | Unset = UNSET,
) -> Response[Error | TrustPage]:
    """List trust delegations

     In creation order, filtered by `owner`, `participant` and `live`. Needs the `admin` scope on the
    store. One page is read at one snapshot and looks at no more than 10,000 records: a filtered page
    may hold fewer than `limit` results and still carry a `next_cursor`; only a page without
    `next_cursor` is the last. An unknown or repeated query parameter is refused with `invalid_request`.

    Args:
        store (str):
        owner (str | Unset):
        participant (str | Unset):
        live (ListTrustLive | Unset):
        limit (int | Unset):  Default: 100.
        cursor (str | Unset):
        at_least (str | Unset): Opaque consistency token naming one revision of one store
            (currently `<revision>.<16 hex digits>`). Pass it back as `at_least` or `at_exact`; a
            malformed token is refused with `invalid_consistency_token`, a token of another store with
            `consistency_token_store_mismatch`.
        at_exact (str | Unset): Opaque consistency token naming one revision of one store
            (currently `<revision>.<16 hex digits>`). Pass it back as `at_least` or `at_exact`; a
            malformed token is refused with `invalid_consistency_token`, a token of another store with
            `consistency_token_store_mismatch`.
        consistency (ListTrustConsistency | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | TrustPage]
    """

    kwargs = _get_kwargs(
        store=store,
        owner=owner,
        participant=participant,
        live=live,
        limit=limit,
        cursor=cursor,
        at_least=at_least,
        at_exact=at_exact,
        consistency=consistency,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    store: str,
    *,
    client: AuthenticatedClient | Client,
    owner: str | Unset = UNSET,
    participant: str | Unset = UNSET,
    live: ListTrustLive | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: ListTrustConsistency | Unset = UNSET,
) -> Error | TrustPage | None:
    """List trust delegations

     In creation order, filtered by `owner`, `participant` and `live`. Needs the `admin` scope on the
    store. One page is read at one snapshot and looks at no more than 10,000 records: a filtered page
    may hold fewer than `limit` results and still carry a `next_cursor`; only a page without
    `next_cursor` is the last. An unknown or repeated query parameter is refused with `invalid_request`.

    Args:
        store (str):
        owner (str | Unset):
        participant (str | Unset):
        live (ListTrustLive | Unset):
        limit (int | Unset):  Default: 100.
        cursor (str | Unset):
        at_least (str | Unset): Opaque consistency token naming one revision of one store
            (currently `<revision>.<16 hex digits>`). Pass it back as `at_least` or `at_exact`; a
            malformed token is refused with `invalid_consistency_token`, a token of another store with
            `consistency_token_store_mismatch`.
        at_exact (str | Unset): Opaque consistency token naming one revision of one store
            (currently `<revision>.<16 hex digits>`). Pass it back as `at_least` or `at_exact`; a
            malformed token is refused with `invalid_consistency_token`, a token of another store with
            `consistency_token_store_mismatch`.
        consistency (ListTrustConsistency | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | TrustPage
    """

    return sync_detailed(
        store=store,
        client=client,
        owner=owner,
        participant=participant,
        live=live,
        limit=limit,
        cursor=cursor,
        at_least=at_least,
        at_exact=at_exact,
        consistency=consistency,
    ).parsed


async def asyncio_detailed(
    store: str,
    *,
    client: AuthenticatedClient | Client,
    owner: str | Unset = UNSET,
    participant: str | Unset = UNSET,
    live: ListTrustLive | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: ListTrustConsistency | Unset = UNSET,
) -> Response[Error | TrustPage]:
    """List trust delegations

     In creation order, filtered by `owner`, `participant` and `live`. Needs the `admin` scope on the
    store. One page is read at one snapshot and looks at no more than 10,000 records: a filtered page
    may hold fewer than `limit` results and still carry a `next_cursor`; only a page without
    `next_cursor` is the last. An unknown or repeated query parameter is refused with `invalid_request`.

    Args:
        store (str):
        owner (str | Unset):
        participant (str | Unset):
        live (ListTrustLive | Unset):
        limit (int | Unset):  Default: 100.
        cursor (str | Unset):
        at_least (str | Unset): Opaque consistency token naming one revision of one store
            (currently `<revision>.<16 hex digits>`). Pass it back as `at_least` or `at_exact`; a
            malformed token is refused with `invalid_consistency_token`, a token of another store with
            `consistency_token_store_mismatch`.
        at_exact (str | Unset): Opaque consistency token naming one revision of one store
            (currently `<revision>.<16 hex digits>`). Pass it back as `at_least` or `at_exact`; a
            malformed token is refused with `invalid_consistency_token`, a token of another store with
            `consistency_token_store_mismatch`.
        consistency (ListTrustConsistency | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | TrustPage]
    """

    kwargs = _get_kwargs(
        store=store,
        owner=owner,
        participant=participant,
        live=live,
        limit=limit,
        cursor=cursor,
        at_least=at_least,
        at_exact=at_exact,
        consistency=consistency,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    store: str,
    *,
    client: AuthenticatedClient | Client,
    owner: str | Unset = UNSET,
    participant: str | Unset = UNSET,
    live: ListTrustLive | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: ListTrustConsistency | Unset = UNSET,
) -> Error | TrustPage | None:
    """List trust delegations

     In creation order, filtered by `owner`, `participant` and `live`. Needs the `admin` scope on the
    store. One page is read at one snapshot and looks at no more than 10,000 records: a filtered page
    may hold fewer than `limit` results and still carry a `next_cursor`; only a page without
    `next_cursor` is the last. An unknown or repeated query parameter is refused with `invalid_request`.

    Args:
        store (str):
        owner (str | Unset):
        participant (str | Unset):
        live (ListTrustLive | Unset):
        limit (int | Unset):  Default: 100.
        cursor (str | Unset):
        at_least (str | Unset): Opaque consistency token naming one revision of one store
            (currently `<revision>.<16 hex digits>`). Pass it back as `at_least` or `at_exact`; a
            malformed token is refused with `invalid_consistency_token`, a token of another store with
            `consistency_token_store_mismatch`.
        at_exact (str | Unset): Opaque consistency token naming one revision of one store
            (currently `<revision>.<16 hex digits>`). Pass it back as `at_least` or `at_exact`; a
            malformed token is refused with `invalid_consistency_token`, a token of another store with
            `consistency_token_store_mismatch`.
        consistency (ListTrustConsistency | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | TrustPage
    """

    return (
        await asyncio_detailed(
            store=store,
            client=client,
            owner=owner,
            participant=participant,
            live=live,
            limit=limit,
            cursor=cursor,
            at_least=at_least,
            at_exact=at_exact,
            consistency=consistency,
        )
    ).parsed
