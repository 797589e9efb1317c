from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.viewer_subsets_response import ViewerSubsetsResponse
from ...models.viewers_request import ViewersRequest
from ...types import Response


def _get_kwargs(
    store: str,
    item: str,
    *,
    body: ViewersRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/stores/{store}/items/{item}/viewers".format(
            store=quote(str(store), safe=""),
            item=quote(str(item), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | ViewerSubsetsResponse | None:
    if response.status_code == 200:
        response_200 = ViewerSubsetsResponse.from_dict(response.json())

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
) -> Response[Error | ViewerSubsetsResponse]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    store: str,
    item: str,
    *,
    client: AuthenticatedClient | Client,
    body: ViewersRequest,
) -> Response[Error | ViewerSubsetsResponse]:
    """Which of these participants an item admits

     Needs the `admin` scope. For each authorized audience, the given participants inside it (`admitted`)
    and outside it; `admitted_together` says whether one audience holds them all, i.e. whether a
    container of exactly them is admitted. With `at_exact` of an older revision the answer is
    historical, for audit only (SPEC §2.6): it admits nobody (`admitted_together` false, `audiences`
    empty, `reason` `denied_historical_revision`), the answer of then is under `historical`, and
    `latest_revision` names the newest revision.

    Args:
        store (str):
        item (str):
        body (ViewersRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ViewerSubsetsResponse]
    """

    kwargs = _get_kwargs(
        store=store,
        item=item,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    store: str,
    item: str,
    *,
    client: AuthenticatedClient | Client,
    body: ViewersRequest,
) -> Error | ViewerSubsetsResponse | None:
    """Which of these participants an item admits

     Needs the `admin` scope. For each authorized audience, the given participants inside it (`admitted`)
    and outside it; `admitted_together` says whether one audience holds them all, i.e. whether a
    container of exactly them is admitted. With `at_exact` of an older revision the answer is
    historical, for audit only (SPEC §2.6): it admits nobody (`admitted_together` false, `audiences`
    empty, `reason` `denied_historical_revision`), the answer of then is under `historical`, and
    `latest_revision` names the newest revision.

    Args:
        store (str):
        item (str):
        body (ViewersRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ViewerSubsetsResponse
    """

    return sync_detailed(
        store=store,
        item=item,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    store: str,
    item: str,
    *,
    client: AuthenticatedClient | Client,
    body: ViewersRequest,
) -> Response[Error | ViewerSubsetsResponse]:
    """Which of these participants an item admits

     Needs the `admin` scope. For each authorized audience, the given participants inside it (`admitted`)
    and outside it; `admitted_together` says whether one audience holds them all, i.e. whether a
    container of exactly them is admitted. With `at_exact` of an older revision the answer is
    historical, for audit only (SPEC §2.6): it admits nobody (`admitted_together` false, `audiences`
    empty, `reason` `denied_historical_revision`), the answer of then is under `historical`, and
    `latest_revision` names the newest revision.

    Args:
        store (str):
        item (str):
        body (ViewersRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | ViewerSubsetsResponse]
    """

    kwargs = _get_kwargs(
        store=store,
        item=item,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    store: str,
    item: str,
    *,
    client: AuthenticatedClient | Client,
    body: ViewersRequest,
) -> Error | ViewerSubsetsResponse | None:
    """Which of these participants an item admits

     Needs the `admin` scope. For each authorized audience, the given participants inside it (`admitted`)
    and outside it; `admitted_together` says whether one audience holds them all, i.e. whether a
    container of exactly them is admitted. With `at_exact` of an older revision the answer is
    historical, for audit only (SPEC §2.6): it admits nobody (`admitted_together` false, `audiences`
    empty, `reason` `denied_historical_revision`), the answer of then is under `historical`, and
    `latest_revision` names the newest revision.

    Args:
        store (str):
        item (str):
        body (ViewersRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | ViewerSubsetsResponse
    """

    return (
        await asyncio_detailed(
            store=store,
            item=item,
            client=client,
            body=body,
        )
    ).parsed
