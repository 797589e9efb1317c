from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.item_page import ItemPage
from ...models.list_items_consistency import ListItemsConsistency
from ...models.state import State
from ...types import UNSET, Response, Unset


def _get_kwargs(
    store: str,
    *,
    owner: str | Unset = UNSET,
    state: State | Unset = UNSET,
    audience: str | Unset = UNSET,
    member: str | Unset = UNSET,
    author: str | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: ListItemsConsistency | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["owner"] = owner

    json_state: str | Unset = UNSET
    if not isinstance(state, Unset):
        json_state = state.value

    params["state"] = json_state

    params["audience"] = audience

    params["member"] = member

    params["author"] = author

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
        "url": "/v1/stores/{store}/items".format(
            store=quote(str(store), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | ItemPage | None:
    if response.status_code == 200:
        response_200 = ItemPage.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Error | ItemPage]:
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
    state: State | Unset = UNSET,
    audience: str | Unset = UNSET,
    member: str | Unset = UNSET,
    author: str | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: ListItemsConsistency | Unset = UNSET,
) -> Response[Error | ItemPage]:
    """List items

     In creation order, without content. `owner`, `audience` and `member` are answered from the postings;
    `state` or `author` alone walks the items. Needs the `admin` scope on the store. Ordered as the list
    says, so that pages visit every element once; one page is read at one snapshot. One page looks at no
    more than 10,000 records: with a filter this order does not index (such as `state` alone) a page may
    hold fewer than `limit` results, or none, and still carry a `next_cursor`; only a page without
    `next_cursor` is the last. An unknown or repeated query parameter is refused with `invalid_request`.

    Args:
        store (str):
        owner (str | Unset):
        state (State | Unset): Lifecycle state of an item.
        audience (str | Unset):
        member (str | Unset):
        author (str | Unset):
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
        consistency (ListItemsConsistency | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ItemPage]
    """

    kwargs = _get_kwargs(
        store=store,
        owner=owner,
        state=state,
        audience=audience,
        member=member,
        author=author,
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
    state: State | Unset = UNSET,
    audience: str | Unset = UNSET,
    member: str | Unset = UNSET,
    author: str | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: ListItemsConsistency | Unset = UNSET,
) -> Error | ItemPage | None:
    """List items

     In creation order, without content. `owner`, `audience` and `member` are answered from the postings;
    `state` or `author` alone walks the items. Needs the `admin` scope on the store. Ordered as the list
    says, so that pages visit every element once; one page is read at one snapshot. One page looks at no
    more than 10,000 records: with a filter this order does not index (such as `state` alone) a page may
    hold fewer than `limit` results, or none, and still carry a `next_cursor`; only a page without
    `next_cursor` is the last. An unknown or repeated query parameter is refused with `invalid_request`.

    Args:
        store (str):
        owner (str | Unset):
        state (State | Unset): Lifecycle state of an item.
        audience (str | Unset):
        member (str | Unset):
        author (str | Unset):
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
        consistency (ListItemsConsistency | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ItemPage
    """

    return sync_detailed(
        store=store,
        client=client,
        owner=owner,
        state=state,
        audience=audience,
        member=member,
        author=author,
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
    state: State | Unset = UNSET,
    audience: str | Unset = UNSET,
    member: str | Unset = UNSET,
    author: str | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: ListItemsConsistency | Unset = UNSET,
) -> Response[Error | ItemPage]:
    """List items

     In creation order, without content. `owner`, `audience` and `member` are answered from the postings;
    `state` or `author` alone walks the items. Needs the `admin` scope on the store. Ordered as the list
    says, so that pages visit every element once; one page is read at one snapshot. One page looks at no
    more than 10,000 records: with a filter this order does not index (such as `state` alone) a page may
    hold fewer than `limit` results, or none, and still carry a `next_cursor`; only a page without
    `next_cursor` is the last. An unknown or repeated query parameter is refused with `invalid_request`.

    Args:
        store (str):
        owner (str | Unset):
        state (State | Unset): Lifecycle state of an item.
        audience (str | Unset):
        member (str | Unset):
        author (str | Unset):
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
        consistency (ListItemsConsistency | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ItemPage]
    """

    kwargs = _get_kwargs(
        store=store,
        owner=owner,
        state=state,
        audience=audience,
        member=member,
        author=author,
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
    state: State | Unset = UNSET,
    audience: str | Unset = UNSET,
    member: str | Unset = UNSET,
    author: str | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: ListItemsConsistency | Unset = UNSET,
) -> Error | ItemPage | None:
    """List items

     In creation order, without content. `owner`, `audience` and `member` are answered from the postings;
    `state` or `author` alone walks the items. Needs the `admin` scope on the store. Ordered as the list
    says, so that pages visit every element once; one page is read at one snapshot. One page looks at no
    more than 10,000 records: with a filter this order does not index (such as `state` alone) a page may
    hold fewer than `limit` results, or none, and still carry a `next_cursor`; only a page without
    `next_cursor` is the last. An unknown or repeated query parameter is refused with `invalid_request`.

    Args:
        store (str):
        owner (str | Unset):
        state (State | Unset): Lifecycle state of an item.
        audience (str | Unset):
        member (str | Unset):
        author (str | Unset):
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
        consistency (ListItemsConsistency | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ItemPage
    """

    return (
        await asyncio_detailed(
            store=store,
            client=client,
            owner=owner,
            state=state,
            audience=audience,
            member=member,
            author=author,
            limit=limit,
            cursor=cursor,
            at_least=at_least,
            at_exact=at_exact,
            consistency=consistency,
        )
    ).parsed
