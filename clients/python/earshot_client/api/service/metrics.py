from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...types import Response


def _get_kwargs() -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/metrics",
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | str | None:
    if response.status_code == 200:
        response_200 = response.text
        return response_200

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

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
    *,
    client: AuthenticatedClient | Client,
) -> Response[Error | str]:
    """Prometheus metrics

     Prometheus text format 0.0.4, every family with HELP and TYPE (docs/configuration.md, "Metrics"):
    requests and latency by route template and status, decisions by endpoint and reason code, and, for
    each store the caller may read, its revision, items, writer queue depth, group-commit batch sizes
    and replica lag. The process-wide families (requests, decisions, tenancy) count every store together
    and are answered only to a token that reads every store.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | str]
    """

    kwargs = _get_kwargs()

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
) -> Error | str | None:
    """Prometheus metrics

     Prometheus text format 0.0.4, every family with HELP and TYPE (docs/configuration.md, "Metrics"):
    requests and latency by route template and status, decisions by endpoint and reason code, and, for
    each store the caller may read, its revision, items, writer queue depth, group-commit batch sizes
    and replica lag. The process-wide families (requests, decisions, tenancy) count every store together
    and are answered only to a token that reads every store.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | str
    """

    return sync_detailed(
        client=client,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
) -> Response[Error | str]:
    """Prometheus metrics

     Prometheus text format 0.0.4, every family with HELP and TYPE (docs/configuration.md, "Metrics"):
    requests and latency by route template and status, decisions by endpoint and reason code, and, for
    each store the caller may read, its revision, items, writer queue depth, group-commit batch sizes
    and replica lag. The process-wide families (requests, decisions, tenancy) count every store together
    and are answered only to a token that reads every store.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | str]
    """

    kwargs = _get_kwargs()

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
) -> Error | str | None:
    """Prometheus metrics

     Prometheus text format 0.0.4, every family with HELP and TYPE (docs/configuration.md, "Metrics"):
    requests and latency by route template and status, decisions by endpoint and reason code, and, for
    each store the caller may read, its revision, items, writer queue depth, group-commit batch sizes
    and replica lag. The process-wide families (requests, decisions, tenancy) count every store together
    and are answered only to a token that reads every store.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | str
    """

    return (
        await asyncio_detailed(
            client=client,
        )
    ).parsed
