from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.reachers_request import ReachersRequest
from ...models.reachers_response import ReachersResponse
from ...types import Response


def _get_kwargs(
    store: str,
    *,
    body: ReachersRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/stores/{store}/authorize/principals".format(
            store=quote(str(store), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | ReachersResponse | None:
    if response.status_code == 200:
        response_200 = ReachersResponse.from_dict(response.json())

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

    if response.status_code == 422:
        response_422 = Error.from_dict(response.json())

        return response_422

    if response.status_code == 503:
        response_503 = Error.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Error | ReachersResponse]:
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
    body: ReachersRequest,
) -> Response[Error | ReachersResponse]:
    """Who can reach a device slice

     Needs the `reader` scope. Every principal that `authorize` allows for (device, path, action) and
    `context` at the snapshot read, each with `allowed`, the reason and the authority `authorize`
    reports: the owner, the grantees of the owner's edges and the holders of capabilities on the device
    are each decided by `authorize` itself. Linear in the store's edges and capabilities. Decisions are
    made on the newest state (SPEC §2.6), as for `authorize`: with `at_exact` of an older revision the
    answer is historical, for audit only. It lists the principals allowed at that revision, each with
    `allowed: false`, reason `denied_historical_revision` and no `authority`, the entry of then under
    `historical`, and `latest_revision` names the newest revision; so a revocation or a consumed use is
    never undone by quoting an older token.

    Args:
        store (str):
        body (ReachersRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ReachersResponse]
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
    body: ReachersRequest,
) -> Error | ReachersResponse | None:
    """Who can reach a device slice

     Needs the `reader` scope. Every principal that `authorize` allows for (device, path, action) and
    `context` at the snapshot read, each with `allowed`, the reason and the authority `authorize`
    reports: the owner, the grantees of the owner's edges and the holders of capabilities on the device
    are each decided by `authorize` itself. Linear in the store's edges and capabilities. Decisions are
    made on the newest state (SPEC §2.6), as for `authorize`: with `at_exact` of an older revision the
    answer is historical, for audit only. It lists the principals allowed at that revision, each with
    `allowed: false`, reason `denied_historical_revision` and no `authority`, the entry of then under
    `historical`, and `latest_revision` names the newest revision; so a revocation or a consumed use is
    never undone by quoting an older token.

    Args:
        store (str):
        body (ReachersRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ReachersResponse
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
    body: ReachersRequest,
) -> Response[Error | ReachersResponse]:
    """Who can reach a device slice

     Needs the `reader` scope. Every principal that `authorize` allows for (device, path, action) and
    `context` at the snapshot read, each with `allowed`, the reason and the authority `authorize`
    reports: the owner, the grantees of the owner's edges and the holders of capabilities on the device
    are each decided by `authorize` itself. Linear in the store's edges and capabilities. Decisions are
    made on the newest state (SPEC §2.6), as for `authorize`: with `at_exact` of an older revision the
    answer is historical, for audit only. It lists the principals allowed at that revision, each with
    `allowed: false`, reason `denied_historical_revision` and no `authority`, the entry of then under
    `historical`, and `latest_revision` names the newest revision; so a revocation or a consumed use is
    never undone by quoting an older token.

    Args:
        store (str):
        body (ReachersRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ReachersResponse]
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
    body: ReachersRequest,
) -> Error | ReachersResponse | None:
    """Who can reach a device slice

     Needs the `reader` scope. Every principal that `authorize` allows for (device, path, action) and
    `context` at the snapshot read, each with `allowed`, the reason and the authority `authorize`
    reports: the owner, the grantees of the owner's edges and the holders of capabilities on the device
    are each decided by `authorize` itself. Linear in the store's edges and capabilities. Decisions are
    made on the newest state (SPEC §2.6), as for `authorize`: with `at_exact` of an older revision the
    answer is historical, for audit only. It lists the principals allowed at that revision, each with
    `allowed: false`, reason `denied_historical_revision` and no `authority`, the entry of then under
    `historical`, and `latest_revision` names the newest revision; so a revocation or a consumed use is
    never undone by quoting an older token.

    Args:
        store (str):
        body (ReachersRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ReachersResponse
    """

    return (
        await asyncio_detailed(
            store=store,
            client=client,
            body=body,
        )
    ).parsed
