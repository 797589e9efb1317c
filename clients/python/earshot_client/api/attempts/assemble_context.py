from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.context_request import ContextRequest
from ...models.error import Error
from ...models.sealed_context import SealedContext
from ...types import Response


def _get_kwargs(
    store: str,
    attempt: str,
    *,
    body: ContextRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/stores/{store}/attempts/{attempt}/context".format(
            store=quote(str(store), safe=""),
            attempt=quote(str(attempt), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | SealedContext | None:
    if response.status_code == 200:
        response_200 = SealedContext.from_dict(response.json())

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

    if response.status_code == 409:
        response_409 = Error.from_dict(response.json())

        return response_409

    if response.status_code == 413:
        response_413 = Error.from_dict(response.json())

        return response_413

    if response.status_code == 415:
        response_415 = Error.from_dict(response.json())

        return response_415

    if response.status_code == 422:
        response_422 = Error.from_dict(response.json())

        return response_422

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


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Error | SealedContext]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    store: str,
    attempt: str,
    *,
    client: AuthenticatedClient | Client,
    body: ContextRequest,
) -> Response[Error | SealedContext]:
    """Assemble and seal the attempt's context

     Authorizes before ranking (SPEC §1.10): the candidates are exactly the admissible items of the
    attempt's container at its pinned revision and time (by default the container owner's memory;
    `owners` names others), and only they are scored, by `ranking`: `bm25` (the default, BM25 over item
    content with the candidates' statistics), `dense` (embedding similarity to `query_embedding`) or
    `hybrid` (reciprocal rank fusion of the two, k = 60). An inadmissible item never takes a fetch or
    context slot. Candidates that match no query term (`bm25`) or carry no embedding (`dense`) are not
    ranked. Order: score descending, ties by item id. The top `fetch` (default 20, at most 200) form the
    fetch window, its first `k` (default 5, at most `fetch`) the context. The exact context (ids,
    content digests, bases, revision, query, ranking, the digest of the query embedding, parameters) is
    sealed and stored durably; the response also carries each item's content. An attempt has one
    context: a second request answers 409 `attempt_sealed` (a retry is a new attempt). Needs the
    `reader` scope on the store.

    Args:
        store (str):
        attempt (str):
        body (ContextRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | SealedContext]
    """

    kwargs = _get_kwargs(
        store=store,
        attempt=attempt,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    store: str,
    attempt: str,
    *,
    client: AuthenticatedClient | Client,
    body: ContextRequest,
) -> Error | SealedContext | None:
    """Assemble and seal the attempt's context

     Authorizes before ranking (SPEC §1.10): the candidates are exactly the admissible items of the
    attempt's container at its pinned revision and time (by default the container owner's memory;
    `owners` names others), and only they are scored, by `ranking`: `bm25` (the default, BM25 over item
    content with the candidates' statistics), `dense` (embedding similarity to `query_embedding`) or
    `hybrid` (reciprocal rank fusion of the two, k = 60). An inadmissible item never takes a fetch or
    context slot. Candidates that match no query term (`bm25`) or carry no embedding (`dense`) are not
    ranked. Order: score descending, ties by item id. The top `fetch` (default 20, at most 200) form the
    fetch window, its first `k` (default 5, at most `fetch`) the context. The exact context (ids,
    content digests, bases, revision, query, ranking, the digest of the query embedding, parameters) is
    sealed and stored durably; the response also carries each item's content. An attempt has one
    context: a second request answers 409 `attempt_sealed` (a retry is a new attempt). Needs the
    `reader` scope on the store.

    Args:
        store (str):
        attempt (str):
        body (ContextRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | SealedContext
    """

    return sync_detailed(
        store=store,
        attempt=attempt,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    store: str,
    attempt: str,
    *,
    client: AuthenticatedClient | Client,
    body: ContextRequest,
) -> Response[Error | SealedContext]:
    """Assemble and seal the attempt's context

     Authorizes before ranking (SPEC §1.10): the candidates are exactly the admissible items of the
    attempt's container at its pinned revision and time (by default the container owner's memory;
    `owners` names others), and only they are scored, by `ranking`: `bm25` (the default, BM25 over item
    content with the candidates' statistics), `dense` (embedding similarity to `query_embedding`) or
    `hybrid` (reciprocal rank fusion of the two, k = 60). An inadmissible item never takes a fetch or
    context slot. Candidates that match no query term (`bm25`) or carry no embedding (`dense`) are not
    ranked. Order: score descending, ties by item id. The top `fetch` (default 20, at most 200) form the
    fetch window, its first `k` (default 5, at most `fetch`) the context. The exact context (ids,
    content digests, bases, revision, query, ranking, the digest of the query embedding, parameters) is
    sealed and stored durably; the response also carries each item's content. An attempt has one
    context: a second request answers 409 `attempt_sealed` (a retry is a new attempt). Needs the
    `reader` scope on the store.

    Args:
        store (str):
        attempt (str):
        body (ContextRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | SealedContext]
    """

    kwargs = _get_kwargs(
        store=store,
        attempt=attempt,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    store: str,
    attempt: str,
    *,
    client: AuthenticatedClient | Client,
    body: ContextRequest,
) -> Error | SealedContext | None:
    """Assemble and seal the attempt's context

     Authorizes before ranking (SPEC §1.10): the candidates are exactly the admissible items of the
    attempt's container at its pinned revision and time (by default the container owner's memory;
    `owners` names others), and only they are scored, by `ranking`: `bm25` (the default, BM25 over item
    content with the candidates' statistics), `dense` (embedding similarity to `query_embedding`) or
    `hybrid` (reciprocal rank fusion of the two, k = 60). An inadmissible item never takes a fetch or
    context slot. Candidates that match no query term (`bm25`) or carry no embedding (`dense`) are not
    ranked. Order: score descending, ties by item id. The top `fetch` (default 20, at most 200) form the
    fetch window, its first `k` (default 5, at most `fetch`) the context. The exact context (ids,
    content digests, bases, revision, query, ranking, the digest of the query embedding, parameters) is
    sealed and stored durably; the response also carries each item's content. An attempt has one
    context: a second request answers 409 `attempt_sealed` (a retry is a new attempt). Needs the
    `reader` scope on the store.

    Args:
        store (str):
        attempt (str):
        body (ContextRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | SealedContext
    """

    return (
        await asyncio_detailed(
            store=store,
            attempt=attempt,
            client=client,
            body=body,
        )
    ).parsed
