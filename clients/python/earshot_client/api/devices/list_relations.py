from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.edge_page import EdgePage
from ...models.error import Error
from ...models.list_relations_consistency import ListRelationsConsistency
from ...types import UNSET, Response, Unset


def _get_kwargs(
    store: str,
    *,
    grantor: str | Unset = UNSET,
    grantee: str | Unset = UNSET,
    relation: str | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: ListRelationsConsistency | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["grantor"] = grantor

    params["grantee"] = grantee

    params["relation"] = relation

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
        "url": "/v1/stores/{store}/relations".format(
            store=quote(str(store), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> EdgePage | Error | None:
    if response.status_code == 200:
        response_200 = EdgePage.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[EdgePage | Error]:
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
    grantor: str | Unset = UNSET,
    grantee: str | Unset = UNSET,
    relation: str | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: ListRelationsConsistency | Unset = UNSET,
) -> Response[EdgePage | Error]:
    """List relation edges

     In creation order; revoked edges included (`revoked`). Indexed when both `grantor` and `grantee` are
    named; otherwise a walk of the edges. Needs the `reader` scope on the store. Ordered as the list
    says, so that pages visit every element once; one page is read at one snapshot. One page looks at no
    more than 10,000 records: with a filter this order does not index (such as `relation` alone) a page
    may hold fewer than `limit` results, or none, and still carry a `next_cursor`; only a page without
    `next_cursor` is the last. An unknown or repeated query parameter is refused with `invalid_request`.

    Args:
        store (str):
        grantor (str | Unset):
        grantee (str | Unset):
        relation (str | Unset):
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
        consistency (ListRelationsConsistency | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EdgePage | Error]
    """

    kwargs = _get_kwargs(
        store=store,
        grantor=grantor,
        grantee=grantee,
        relation=relation,
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
    grantor: str | Unset = UNSET,
    grantee: str | Unset = UNSET,
    relation: str | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: ListRelationsConsistency | Unset = UNSET,
) -> EdgePage | Error | None:
    """List relation edges

     In creation order; revoked edges included (`revoked`). Indexed when both `grantor` and `grantee` are
    named; otherwise a walk of the edges. Needs the `reader` scope on the store. Ordered as the list
    says, so that pages visit every element once; one page is read at one snapshot. One page looks at no
    more than 10,000 records: with a filter this order does not index (such as `relation` alone) a page
    may hold fewer than `limit` results, or none, and still carry a `next_cursor`; only a page without
    `next_cursor` is the last. An unknown or repeated query parameter is refused with `invalid_request`.

    Args:
        store (str):
        grantor (str | Unset):
        grantee (str | Unset):
        relation (str | Unset):
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
        consistency (ListRelationsConsistency | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EdgePage | Error
    """

    return sync_detailed(
        store=store,
        client=client,
        grantor=grantor,
        grantee=grantee,
        relation=relation,
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
    grantor: str | Unset = UNSET,
    grantee: str | Unset = UNSET,
    relation: str | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: ListRelationsConsistency | Unset = UNSET,
) -> Response[EdgePage | Error]:
    """List relation edges

     In creation order; revoked edges included (`revoked`). Indexed when both `grantor` and `grantee` are
    named; otherwise a walk of the edges. Needs the `reader` scope on the store. Ordered as the list
    says, so that pages visit every element once; one page is read at one snapshot. One page looks at no
    more than 10,000 records: with a filter this order does not index (such as `relation` alone) a page
    may hold fewer than `limit` results, or none, and still carry a `next_cursor`; only a page without
    `next_cursor` is the last. An unknown or repeated query parameter is refused with `invalid_request`.

    Args:
        store (str):
        grantor (str | Unset):
        grantee (str | Unset):
        relation (str | Unset):
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
        consistency (ListRelationsConsistency | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EdgePage | Error]
    """

    kwargs = _get_kwargs(
        store=store,
        grantor=grantor,
        grantee=grantee,
        relation=relation,
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
    grantor: str | Unset = UNSET,
    grantee: str | Unset = UNSET,
    relation: str | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: ListRelationsConsistency | Unset = UNSET,
) -> EdgePage | Error | None:
    """List relation edges

     In creation order; revoked edges included (`revoked`). Indexed when both `grantor` and `grantee` are
    named; otherwise a walk of the edges. Needs the `reader` scope on the store. Ordered as the list
    says, so that pages visit every element once; one page is read at one snapshot. One page looks at no
    more than 10,000 records: with a filter this order does not index (such as `relation` alone) a page
    may hold fewer than `limit` results, or none, and still carry a `next_cursor`; only a page without
    `next_cursor` is the last. An unknown or repeated query parameter is refused with `invalid_request`.

    Args:
        store (str):
        grantor (str | Unset):
        grantee (str | Unset):
        relation (str | Unset):
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
        consistency (ListRelationsConsistency | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EdgePage | Error
    """

    return (
        await asyncio_detailed(
            store=store,
            client=client,
            grantor=grantor,
            grantee=grantee,
            relation=relation,
            limit=limit,
            cursor=cursor,
            at_least=at_least,
            at_exact=at_exact,
            consistency=consistency,
        )
    ).parsed
