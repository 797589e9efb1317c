from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.write_outcome import WriteOutcome
from ...types import UNSET, Response, Unset


def _get_kwargs(
    store: str,
    *,
    confirm: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["confirm"] = confirm

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/v1/stores/{store}".format(
            store=quote(str(store), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | WriteOutcome | None:
    if response.status_code == 200:
        response_200 = WriteOutcome.from_dict(response.json())

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

    if response.status_code == 503:
        response_503 = Error.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Error | WriteOutcome]:
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
    confirm: str | Unset = UNSET,
) -> Response[Error | WriteOutcome]:
    """Delete a store and every record of it

     Needs the `admin` scope on a token not limited to stores, and the store's id repeated as
    `?confirm=<store id>`. Stops the store's writer and removes every record (sled: its tree and
    watermark entry; PostgreSQL: its records and head row) durably; the store is then `store_not_found`,
    also after a restart, and its id may be created anew. Replicas that had started the store keep
    serving it from memory until they restart.

    Args:
        store (str):
        confirm (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | WriteOutcome]
    """

    kwargs = _get_kwargs(
        store=store,
        confirm=confirm,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    store: str,
    *,
    client: AuthenticatedClient | Client,
    confirm: str | Unset = UNSET,
) -> Error | WriteOutcome | None:
    """Delete a store and every record of it

     Needs the `admin` scope on a token not limited to stores, and the store's id repeated as
    `?confirm=<store id>`. Stops the store's writer and removes every record (sled: its tree and
    watermark entry; PostgreSQL: its records and head row) durably; the store is then `store_not_found`,
    also after a restart, and its id may be created anew. Replicas that had started the store keep
    serving it from memory until they restart.

    Args:
        store (str):
        confirm (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | WriteOutcome
    """

    return sync_detailed(
        store=store,
        client=client,
        confirm=confirm,
    ).parsed


async def asyncio_detailed(
    store: str,
    *,
    client: AuthenticatedClient | Client,
    confirm: str | Unset = UNSET,
) -> Response[Error | WriteOutcome]:
    """Delete a store and every record of it

     Needs the `admin` scope on a token not limited to stores, and the store's id repeated as
    `?confirm=<store id>`. Stops the store's writer and removes every record (sled: its tree and
    watermark entry; PostgreSQL: its records and head row) durably; the store is then `store_not_found`,
    also after a restart, and its id may be created anew. Replicas that had started the store keep
    serving it from memory until they restart.

    Args:
        store (str):
        confirm (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | WriteOutcome]
    """

    kwargs = _get_kwargs(
        store=store,
        confirm=confirm,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    store: str,
    *,
    client: AuthenticatedClient | Client,
    confirm: str | Unset = UNSET,
) -> Error | WriteOutcome | None:
    """Delete a store and every record of it

     Needs the `admin` scope on a token not limited to stores, and the store's id repeated as
    `?confirm=<store id>`. Stops the store's writer and removes every record (sled: its tree and
    watermark entry; PostgreSQL: its records and head row) durably; the store is then `store_not_found`,
    also after a restart, and its id may be created anew. Replicas that had started the store keep
    serving it from memory until they restart.

    Args:
        store (str):
        confirm (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | WriteOutcome
    """

    return (
        await asyncio_detailed(
            store=store,
            client=client,
            confirm=confirm,
        )
    ).parsed
