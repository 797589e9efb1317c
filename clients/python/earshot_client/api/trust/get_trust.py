from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.trust_view import TrustView
from ...types import Response


def _get_kwargs(
    store: str,
    trust: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/stores/{store}/trust/{trust}".format(
            store=quote(str(store), safe=""),
            trust=quote(str(trust), safe=""),
        ),
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | TrustView | None:
    if response.status_code == 200:
        response_200 = TrustView.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Error | TrustView]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    store: str,
    trust: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Error | TrustView]:
    """Read a trust delegation

     At the latest revision. Needs the `admin` scope on the store.

    Args:
        store (str):
        trust (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | TrustView]
    """

    kwargs = _get_kwargs(
        store=store,
        trust=trust,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    store: str,
    trust: str,
    *,
    client: AuthenticatedClient | Client,
) -> Error | TrustView | None:
    """Read a trust delegation

     At the latest revision. Needs the `admin` scope on the store.

    Args:
        store (str):
        trust (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | TrustView
    """

    return sync_detailed(
        store=store,
        trust=trust,
        client=client,
    ).parsed


async def asyncio_detailed(
    store: str,
    trust: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Error | TrustView]:
    """Read a trust delegation

     At the latest revision. Needs the `admin` scope on the store.

    Args:
        store (str):
        trust (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | TrustView]
    """

    kwargs = _get_kwargs(
        store=store,
        trust=trust,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    store: str,
    trust: str,
    *,
    client: AuthenticatedClient | Client,
) -> Error | TrustView | None:
    """Read a trust delegation

     At the latest revision. Needs the `admin` scope on the store.

    Args:
        store (str):
        trust (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | TrustView
    """

    return (
        await asyncio_detailed(
            store=store,
            trust=trust,
            client=client,
        )
    ).parsed
