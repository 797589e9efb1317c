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
    capability: str,
    *,
    by: str,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    params: dict[str, Any] = {}

    params["by"] = by

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/v1/stores/{store}/capabilities/{capability}".format(
            store=quote(str(store), safe=""),
            capability=quote(str(capability), safe=""),
        ),
        "params": params,
    }

    _kwargs["headers"] = headers
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

    if response.status_code == 409:
        response_409 = Error.from_dict(response.json())

        return response_409

    if response.status_code == 422:
        response_422 = Error.from_dict(response.json())

        return response_422

    if response.status_code == 500:
        response_500 = Error.from_dict(response.json())

        return response_500

    if response.status_code == 503:
        response_503 = Error.from_dict(response.json())

        return response_503

    if response.status_code == 507:
        response_507 = Error.from_dict(response.json())

        return response_507

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
    capability: str,
    *,
    client: AuthenticatedClient | Client,
    by: str,
    idempotency_key: str | Unset = UNSET,
) -> Response[Error | WriteOutcome]:
    """Revoke a capability; every descendant fails from the next decision on

     Needs the `admin` scope. `?by=` must be the device's owner or the holder of an ancestor. `ids` holds
    the revoked capability alone; `invalidated` lists the descendants it newly invalidates (not
    themselves revoked: their chain view shows `revoked: false` with `invalidated_by`),
    `already_invalid` those an earlier revocation had already invalidated.

    Args:
        store (str):
        capability (str):
        by (str): Identifier: `[a-z0-9][a-z0-9_.@-]{0,127}`. The spellings of the anonymous
            participant (`anonymous`, `_`, `*`, `⊥`) are refused with 422 `anonymous_participant`; any
            other malformed identifier with 400 `invalid_id`.
        idempotency_key (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | WriteOutcome]
    """

    kwargs = _get_kwargs(
        store=store,
        capability=capability,
        by=by,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    store: str,
    capability: str,
    *,
    client: AuthenticatedClient | Client,
    by: str,
    idempotency_key: str | Unset = UNSET,
) -> Error | WriteOutcome | None:
    """Revoke a capability; every descendant fails from the next decision on

     Needs the `admin` scope. `?by=` must be the device's owner or the holder of an ancestor. `ids` holds
    the revoked capability alone; `invalidated` lists the descendants it newly invalidates (not
    themselves revoked: their chain view shows `revoked: false` with `invalidated_by`),
    `already_invalid` those an earlier revocation had already invalidated.

    Args:
        store (str):
        capability (str):
        by (str): Identifier: `[a-z0-9][a-z0-9_.@-]{0,127}`. The spellings of the anonymous
            participant (`anonymous`, `_`, `*`, `⊥`) are refused with 422 `anonymous_participant`; any
            other malformed identifier with 400 `invalid_id`.
        idempotency_key (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | WriteOutcome
    """

    return sync_detailed(
        store=store,
        capability=capability,
        client=client,
        by=by,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    store: str,
    capability: str,
    *,
    client: AuthenticatedClient | Client,
    by: str,
    idempotency_key: str | Unset = UNSET,
) -> Response[Error | WriteOutcome]:
    """Revoke a capability; every descendant fails from the next decision on

     Needs the `admin` scope. `?by=` must be the device's owner or the holder of an ancestor. `ids` holds
    the revoked capability alone; `invalidated` lists the descendants it newly invalidates (not
    themselves revoked: their chain view shows `revoked: false` with `invalidated_by`),
    `already_invalid` those an earlier revocation had already invalidated.

    Args:
        store (str):
        capability (str):
        by (str): Identifier: `[a-z0-9][a-z0-9_.@-]{0,127}`. The spellings of the anonymous
            participant (`anonymous`, `_`, `*`, `⊥`) are refused with 422 `anonymous_participant`; any
            other malformed identifier with 400 `invalid_id`.
        idempotency_key (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | WriteOutcome]
    """

    kwargs = _get_kwargs(
        store=store,
        capability=capability,
        by=by,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    store: str,
    capability: str,
    *,
    client: AuthenticatedClient | Client,
    by: str,
    idempotency_key: str | Unset = UNSET,
) -> Error | WriteOutcome | None:
    """Revoke a capability; every descendant fails from the next decision on

     Needs the `admin` scope. `?by=` must be the device's owner or the holder of an ancestor. `ids` holds
    the revoked capability alone; `invalidated` lists the descendants it newly invalidates (not
    themselves revoked: their chain view shows `revoked: false` with `invalidated_by`),
    `already_invalid` those an earlier revocation had already invalidated.

    Args:
        store (str):
        capability (str):
        by (str): Identifier: `[a-z0-9][a-z0-9_.@-]{0,127}`. The spellings of the anonymous
            participant (`anonymous`, `_`, `*`, `⊥`) are refused with 422 `anonymous_participant`; any
            other malformed identifier with 400 `invalid_id`.
        idempotency_key (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | WriteOutcome
    """

    return (
        await asyncio_detailed(
            store=store,
            capability=capability,
            client=client,
            by=by,
            idempotency_key=idempotency_key,
        )
    ).parsed
