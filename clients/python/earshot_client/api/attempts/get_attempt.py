from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.attempt_response import AttemptResponse
from ...models.error import Error
from ...types import Response


def _get_kwargs(
    store: str,
    attempt: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/stores/{store}/attempts/{attempt}".format(
            store=quote(str(store), safe=""),
            attempt=quote(str(attempt), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> AttemptResponse | Error | None:
    if response.status_code == 200:
        response_200 = AttemptResponse.from_dict(response.json())

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
) -> Response[AttemptResponse | Error]:
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
) -> Response[AttemptResponse | Error]:
    """Read an attempt and its sealed context

     An open attempt, with its sealed context once one was assembled; after the attempt expired (or the
    service restarted) its sealed context is still read back from the durable record. Needs the `reader`
    scope on the store.

    Args:
        store (str):
        attempt (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AttemptResponse | Error]
    """

    kwargs = _get_kwargs(
        store=store,
        attempt=attempt,
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
) -> AttemptResponse | Error | None:
    """Read an attempt and its sealed context

     An open attempt, with its sealed context once one was assembled; after the attempt expired (or the
    service restarted) its sealed context is still read back from the durable record. Needs the `reader`
    scope on the store.

    Args:
        store (str):
        attempt (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AttemptResponse | Error
    """

    return sync_detailed(
        store=store,
        attempt=attempt,
        client=client,
    ).parsed


async def asyncio_detailed(
    store: str,
    attempt: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[AttemptResponse | Error]:
    """Read an attempt and its sealed context

     An open attempt, with its sealed context once one was assembled; after the attempt expired (or the
    service restarted) its sealed context is still read back from the durable record. Needs the `reader`
    scope on the store.

    Args:
        store (str):
        attempt (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AttemptResponse | Error]
    """

    kwargs = _get_kwargs(
        store=store,
        attempt=attempt,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    store: str,
    attempt: str,
    *,
    client: AuthenticatedClient | Client,
) -> AttemptResponse | Error | None:
    """Read an attempt and its sealed context

     An open attempt, with its sealed context once one was assembled; after the attempt expired (or the
    service restarted) its sealed context is still read back from the durable record. Needs the `reader`
    scope on the store.

    Args:
        store (str):
        attempt (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AttemptResponse | Error
    """

    return (
        await asyncio_detailed(
            store=store,
            attempt=attempt,
            client=client,
        )
    ).parsed
