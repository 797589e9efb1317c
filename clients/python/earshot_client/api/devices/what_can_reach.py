from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.reachable_request import ReachableRequest
from ...models.reachable_response import ReachableResponse
from ...types import Response


def _get_kwargs(
    store: str,
    *,
    body: ReachableRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/stores/{store}/authorize/reachable".format(
            store=quote(str(store), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | ReachableResponse | None:
    if response.status_code == 200:
        response_200 = ReachableResponse.from_dict(response.json())

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

    if response.status_code == 413:
        response_413 = Error.from_dict(response.json())

        return response_413

    if response.status_code == 415:
        response_415 = Error.from_dict(response.json())

        return response_415

    if response.status_code == 503:
        response_503 = Error.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Error | ReachableResponse]:
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
    body: ReachableRequest,
) -> Response[Error | ReachableResponse]:
    """What a principal can reach

     Needs the `reader` scope. The devices the principal owns (`all`), the openings of every edge it
    receives that holds at the snapshot read on each of the grantor's devices, and every capability it
    holds whose chain holds then, each with `allowed`, the reason `authorize` gives for it and its
    authority. A (device, path, action) is allowed by `authorize` exactly when one of these covers it.
    Decisions are made on the newest state (SPEC §2.6), as for `authorize`: with `at_exact` of an older
    revision the answer is historical, for audit only. Each entry then has `allowed: false`, reason
    `denied_historical_revision`, `all: false` and no paths, actions or `authority` (it covers nothing),
    with the entry of then under `historical`, and `latest_revision` names the newest revision.

    Args:
        store (str):
        body (ReachableRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ReachableResponse]
    """

    kwargs = _get_kwargs(
        store=store,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    store: str,
    *,
    client: AuthenticatedClient | Client,
    body: ReachableRequest,
) -> Error | ReachableResponse | None:
    """What a principal can reach

     Needs the `reader` scope. The devices the principal owns (`all`), the openings of every edge it
    receives that holds at the snapshot read on each of the grantor's devices, and every capability it
    holds whose chain holds then, each with `allowed`, the reason `authorize` gives for it and its
    authority. A (device, path, action) is allowed by `authorize` exactly when one of these covers it.
    Decisions are made on the newest state (SPEC §2.6), as for `authorize`: with `at_exact` of an older
    revision the answer is historical, for audit only. Each entry then has `allowed: false`, reason
    `denied_historical_revision`, `all: false` and no paths, actions or `authority` (it covers nothing),
    with the entry of then under `historical`, and `latest_revision` names the newest revision.

    Args:
        store (str):
        body (ReachableRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ReachableResponse
    """

    return sync_detailed(
        store=store,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    store: str,
    *,
    client: AuthenticatedClient | Client,
    body: ReachableRequest,
) -> Response[Error | ReachableResponse]:
    """What a principal can reach

     Needs the `reader` scope. The devices the principal owns (`all`), the openings of every edge it
    receives that holds at the snapshot read on each of the grantor's devices, and every capability it
    holds whose chain holds then, each with `allowed`, the reason `authorize` gives for it and its
    authority. A (device, path, action) is allowed by `authorize` exactly when one of these covers it.
    Decisions are made on the newest state (SPEC §2.6), as for `authorize`: with `at_exact` of an older
    revision the answer is historical, for audit only. Each entry then has `allowed: false`, reason
    `denied_historical_revision`, `all: false` and no paths, actions or `authority` (it covers nothing),
    with the entry of then under `historical`, and `latest_revision` names the newest revision.

    Args:
        store (str):
        body (ReachableRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ReachableResponse]
    """

    kwargs = _get_kwargs(
        store=store,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    store: str,
    *,
    client: AuthenticatedClient | Client,
    body: ReachableRequest,
) -> Error | ReachableResponse | None:
    """What a principal can reach

     Needs the `reader` scope. The devices the principal owns (`all`), the openings of every edge it
    receives that holds at the snapshot read on each of the grantor's devices, and every capability it
    holds whose chain holds then, each with `allowed`, the reason `authorize` gives for it and its
    authority. A (device, path, action) is allowed by `authorize` exactly when one of these covers it.
    Decisions are made on the newest state (SPEC §2.6), as for `authorize`: with `at_exact` of an older
    revision the answer is historical, for audit only. Each entry then has `allowed: false`, reason
    `denied_historical_revision`, `all: false` and no paths, actions or `authority` (it covers nothing),
    with the entry of then under `historical`, and `latest_revision` names the newest revision.

    Args:
        store (str):
        body (ReachableRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ReachableResponse
    """

    return (
        await asyncio_detailed(
            store=store,
            client=client,
            body=body,
        )
    ).parsed
