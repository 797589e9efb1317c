from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.read_relationships_consistency import ReadRelationshipsConsistency
from ...models.tuple_page import TuplePage
from ...types import UNSET, Response, Unset


def _get_kwargs(
    store: str,
    *,
    resource_type: str | Unset = UNSET,
    resource_id: str | Unset = UNSET,
    relation: str | Unset = UNSET,
    subject_type: str | Unset = UNSET,
    subject_id: str | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: ReadRelationshipsConsistency | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["resource_type"] = resource_type

    params["resource_id"] = resource_id

    params["relation"] = relation

    params["subject_type"] = subject_type

    params["subject_id"] = subject_id

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
        "url": "/v1/stores/{store}/relationships".format(
            store=quote(str(store), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | TuplePage | None:
    if response.status_code == 200:
        response_200 = TuplePage.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Error | TuplePage]:
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
    resource_type: str | Unset = UNSET,
    resource_id: str | Unset = UNSET,
    relation: str | Unset = UNSET,
    subject_type: str | Unset = UNSET,
    subject_id: str | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: ReadRelationshipsConsistency | Unset = UNSET,
) -> Response[Error | TuplePage]:
    """Read the graph as relationship tuples

     Like `zed relationship read` or OpenFGA's Read. Families, in this order:
    `audience#member@participant`, `item#origin@audience`, `item#granted@audience` (with the grant),
    `item#derived_from@item`, `device#owner@participant`, `participant#relation:<name>@participant`
    (grantor, grantee; with the edge), `capability#delegated_from@capability`,
    `capability#held_by@participant`. Revoked grants, edges and capabilities are included, marked
    `revoked`. An id needs its type (`invalid_request`). Indexed: a resource id, a subject id of
    audience#member, origin, granted and delegated_from, and both ends of an edge; other filters walk
    their family. One page looks at no more than 10,000 records: a walking filter may answer fewer than
    `limit` results, or none, with a `next_cursor`; only a page without `next_cursor` is the last. Needs
    the `admin` scope on the store. Ordered as the list says, so that pages visit every element once;
    one page is read at one snapshot. An unknown or repeated query parameter is refused with
    `invalid_request`.

    Args:
        store (str):
        resource_type (str | Unset):
        resource_id (str | Unset):
        relation (str | Unset):
        subject_type (str | Unset):
        subject_id (str | Unset):
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
        consistency (ReadRelationshipsConsistency | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | TuplePage]
    """

    kwargs = _get_kwargs(
        store=store,
        resource_type=resource_type,
        resource_id=resource_id,
        relation=relation,
        subject_type=subject_type,
        subject_id=subject_id,
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
    resource_type: str | Unset = UNSET,
    resource_id: str | Unset = UNSET,
    relation: str | Unset = UNSET,
    subject_type: str | Unset = UNSET,
    subject_id: str | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: ReadRelationshipsConsistency | Unset = UNSET,
) -> Error | TuplePage | None:
    """Read the graph as relationship tuples

     Like `zed relationship read` or OpenFGA's Read. Families, in this order:
    `audience#member@participant`, `item#origin@audience`, `item#granted@audience` (with the grant),
    `item#derived_from@item`, `device#owner@participant`, `participant#relation:<name>@participant`
    (grantor, grantee; with the edge), `capability#delegated_from@capability`,
    `capability#held_by@participant`. Revoked grants, edges and capabilities are included, marked
    `revoked`. An id needs its type (`invalid_request`). Indexed: a resource id, a subject id of
    audience#member, origin, granted and delegated_from, and both ends of an edge; other filters walk
    their family. One page looks at no more than 10,000 records: a walking filter may answer fewer than
    `limit` results, or none, with a `next_cursor`; only a page without `next_cursor` is the last. Needs
    the `admin` scope on the store. Ordered as the list says, so that pages visit every element once;
    one page is read at one snapshot. An unknown or repeated query parameter is refused with
    `invalid_request`.

    Args:
        store (str):
        resource_type (str | Unset):
        resource_id (str | Unset):
        relation (str | Unset):
        subject_type (str | Unset):
        subject_id (str | Unset):
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
        consistency (ReadRelationshipsConsistency | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | TuplePage
    """

    return sync_detailed(
        store=store,
        client=client,
        resource_type=resource_type,
        resource_id=resource_id,
        relation=relation,
        subject_type=subject_type,
        subject_id=subject_id,
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
    resource_type: str | Unset = UNSET,
    resource_id: str | Unset = UNSET,
    relation: str | Unset = UNSET,
    subject_type: str | Unset = UNSET,
    subject_id: str | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: ReadRelationshipsConsistency | Unset = UNSET,
) -> Response[Error | TuplePage]:
    """Read the graph as relationship tuples

     Like `zed relationship read` or OpenFGA's Read. Families, in this order:
    `audience#member@participant`, `item#origin@audience`, `item#granted@audience` (with the grant),
    `item#derived_from@item`, `device#owner@participant`, `participant#relation:<name>@participant`
    (grantor, grantee; with the edge), `capability#delegated_from@capability`,
    `capability#held_by@participant`. Revoked grants, edges and capabilities are included, marked
    `revoked`. An id needs its type (`invalid_request`). Indexed: a resource id, a subject id of
    audience#member, origin, granted and delegated_from, and both ends of an edge; other filters walk
    their family. One page looks at no more than 10,000 records: a walking filter may answer fewer than
    `limit` results, or none, with a `next_cursor`; only a page without `next_cursor` is the last. Needs
    the `admin` scope on the store. Ordered as the list says, so that pages visit every element once;
    one page is read at one snapshot. An unknown or repeated query parameter is refused with
    `invalid_request`.

    Args:
        store (str):
        resource_type (str | Unset):
        resource_id (str | Unset):
        relation (str | Unset):
        subject_type (str | Unset):
        subject_id (str | Unset):
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
        consistency (ReadRelationshipsConsistency | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | TuplePage]
    """

    kwargs = _get_kwargs(
        store=store,
        resource_type=resource_type,
        resource_id=resource_id,
        relation=relation,
        subject_type=subject_type,
        subject_id=subject_id,
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
    resource_type: str | Unset = UNSET,
    resource_id: str | Unset = UNSET,
    relation: str | Unset = UNSET,
    subject_type: str | Unset = UNSET,
    subject_id: str | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: str | Unset = UNSET,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: ReadRelationshipsConsistency | Unset = UNSET,
) -> Error | TuplePage | None:
    """Read the graph as relationship tuples

     Like `zed relationship read` or OpenFGA's Read. Families, in this order:
    `audience#member@participant`, `item#origin@audience`, `item#granted@audience` (with the grant),
    `item#derived_from@item`, `device#owner@participant`, `participant#relation:<name>@participant`
    (grantor, grantee; with the edge), `capability#delegated_from@capability`,
    `capability#held_by@participant`. Revoked grants, edges and capabilities are included, marked
    `revoked`. An id needs its type (`invalid_request`). Indexed: a resource id, a subject id of
    audience#member, origin, granted and delegated_from, and both ends of an edge; other filters walk
    their family. One page looks at no more than 10,000 records: a walking filter may answer fewer than
    `limit` results, or none, with a `next_cursor`; only a page without `next_cursor` is the last. Needs
    the `admin` scope on the store. Ordered as the list says, so that pages visit every element once;
    one page is read at one snapshot. An unknown or repeated query parameter is refused with
    `invalid_request`.

    Args:
        store (str):
        resource_type (str | Unset):
        resource_id (str | Unset):
        relation (str | Unset):
        subject_type (str | Unset):
        subject_id (str | Unset):
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
        consistency (ReadRelationshipsConsistency | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | TuplePage
    """

    return (
        await asyncio_detailed(
            store=store,
            client=client,
            resource_type=resource_type,
            resource_id=resource_id,
            relation=relation,
            subject_type=subject_type,
            subject_id=subject_id,
            limit=limit,
            cursor=cursor,
            at_least=at_least,
            at_exact=at_exact,
            consistency=consistency,
        )
    ).parsed
