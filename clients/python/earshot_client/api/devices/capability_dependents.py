from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.capability_dependents_consistency import CapabilityDependentsConsistency
from ...models.dependents_response import DependentsResponse
from ...models.error import Error
from ...types import UNSET, Response, Unset


def _get_kwargs(
    store: str,
    capability: str,
    *,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: CapabilityDependentsConsistency | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["at_least"] = at_least

    params["at_exact"] = at_exact

    json_consistency: str | Unset = UNSET
    if not isinstance(consistency, Unset):
        json_consistency = consistency.value

    params["consistency"] = json_consistency

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/stores/{store}/capabilities/{capability}/dependents".format(
            store=quote(str(store), safe=""),
            capability=quote(str(capability), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> DependentsResponse | Error | None:
    if response.status_code == 200:
        response_200 = DependentsResponse.from_dict(response.json())

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
) -> Response[DependentsResponse | Error]:
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
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: CapabilityDependentsConsistency | Unset = UNSET,
) -> Response[DependentsResponse | Error]:
    """Which capabilities revoking this one would invalidate

     Needs the `reader` scope. Answers "what would revoking this capability invalidate?": `invalidates`
    lists the descendants it would newly invalidate, `already_invalid` those an earlier revocation
    already invalidated (revoked themselves, or below a revoked link); the revocation answers the same
    two lists. Only revocations count, not windows or use counts (judged at each use). The query string
    takes the consistency parameters (`at_least`, `at_exact`, `consistency`) and nothing else; an
    unknown parameter is `400 invalid_request` naming it.

    Args:
        store (str):
        capability (str):
        at_least (str | Unset): Opaque consistency token naming one revision of one store
            (currently `<revision>.<16 hex digits>`). Pass it back as `at_least` or `at_exact`; a
            malformed token is refused with `invalid_consistency_token`, a token of another store with
            `consistency_token_store_mismatch`.
        at_exact (str | Unset): Opaque consistency token naming one revision of one store
            (currently `<revision>.<16 hex digits>`). Pass it back as `at_least` or `at_exact`; a
            malformed token is refused with `invalid_consistency_token`, a token of another store with
            `consistency_token_store_mismatch`.
        consistency (CapabilityDependentsConsistency | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DependentsResponse | Error]
    """

    kwargs = _get_kwargs(
        store=store,
        capability=capability,
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
    capability: str,
    *,
    client: AuthenticatedClient | Client,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: CapabilityDependentsConsistency | Unset = UNSET,
) -> DependentsResponse | Error | None:
    """Which capabilities revoking this one would invalidate

     Needs the `reader` scope. Answers "what would revoking this capability invalidate?": `invalidates`
    lists the descendants it would newly invalidate, `already_invalid` those an earlier revocation
    already invalidated (revoked themselves, or below a revoked link); the revocation answers the same
    two lists. Only revocations count, not windows or use counts (judged at each use). The query string
    takes the consistency parameters (`at_least`, `at_exact`, `consistency`) and nothing else; an
    unknown parameter is `400 invalid_request` naming it.

    Args:
        store (str):
        capability (str):
        at_least (str | Unset): Opaque consistency token naming one revision of one store
            (currently `<revision>.<16 hex digits>`). Pass it back as `at_least` or `at_exact`; a
            malformed token is refused with `invalid_consistency_token`, a token of another store with
            `consistency_token_store_mismatch`.
        at_exact (str | Unset): Opaque consistency token naming one revision of one store
            (currently `<revision>.<16 hex digits>`). Pass it back as `at_least` or `at_exact`; a
            malformed token is refused with `invalid_consistency_token`, a token of another store with
            `consistency_token_store_mismatch`.
        consistency (CapabilityDependentsConsistency | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DependentsResponse | Error
    """

    return sync_detailed(
        store=store,
        capability=capability,
        client=client,
        at_least=at_least,
        at_exact=at_exact,
        consistency=consistency,
    ).parsed


async def asyncio_detailed(
    store: str,
    capability: str,
    *,
    client: AuthenticatedClient | Client,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: CapabilityDependentsConsistency | Unset = UNSET,
) -> Response[DependentsResponse | Error]:
    """Which capabilities revoking this one would invalidate

     Needs the `reader` scope. Answers "what would revoking this capability invalidate?": `invalidates`
    lists the descendants it would newly invalidate, `already_invalid` those an earlier revocation
    already invalidated (revoked themselves, or below a revoked link); the revocation answers the same
    two lists. Only revocations count, not windows or use counts (judged at each use). The query string
    takes the consistency parameters (`at_least`, `at_exact`, `consistency`) and nothing else; an
    unknown parameter is `400 invalid_request` naming it.

    Args:
        store (str):
        capability (str):
        at_least (str | Unset): Opaque consistency token naming one revision of one store
            (currently `<revision>.<16 hex digits>`). Pass it back as `at_least` or `at_exact`; a
            malformed token is refused with `invalid_consistency_token`, a token of another store with
            `consistency_token_store_mismatch`.
        at_exact (str | Unset): Opaque consistency token naming one revision of one store
            (currently `<revision>.<16 hex digits>`). Pass it back as `at_least` or `at_exact`; a
            malformed token is refused with `invalid_consistency_token`, a token of another store with
            `consistency_token_store_mismatch`.
        consistency (CapabilityDependentsConsistency | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DependentsResponse | Error]
    """

    kwargs = _get_kwargs(
        store=store,
        capability=capability,
        at_least=at_least,
        at_exact=at_exact,
        consistency=consistency,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    store: str,
    capability: str,
    *,
    client: AuthenticatedClient | Client,
    at_least: str | Unset = UNSET,
    at_exact: str | Unset = UNSET,
    consistency: CapabilityDependentsConsistency | Unset = UNSET,
) -> DependentsResponse | Error | None:
    """Which capabilities revoking this one would invalidate

     Needs the `reader` scope. Answers "what would revoking this capability invalidate?": `invalidates`
    lists the descendants it would newly invalidate, `already_invalid` those an earlier revocation
    already invalidated (revoked themselves, or below a revoked link); the revocation answers the same
    two lists. Only revocations count, not windows or use counts (judged at each use). The query string
    takes the consistency parameters (`at_least`, `at_exact`, `consistency`) and nothing else; an
    unknown parameter is `400 invalid_request` naming it.

    Args:
        store (str):
        capability (str):
        at_least (str | Unset): Opaque consistency token naming one revision of one store
            (currently `<revision>.<16 hex digits>`). Pass it back as `at_least` or `at_exact`; a
            malformed token is refused with `invalid_consistency_token`, a token of another store with
            `consistency_token_store_mismatch`.
        at_exact (str | Unset): Opaque consistency token naming one revision of one store
            (currently `<revision>.<16 hex digits>`). Pass it back as `at_least` or `at_exact`; a
            malformed token is refused with `invalid_consistency_token`, a token of another store with
            `consistency_token_store_mismatch`.
        consistency (CapabilityDependentsConsistency | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DependentsResponse | Error
    """

    return (
        await asyncio_detailed(
            store=store,
            capability=capability,
            client=client,
            at_least=at_least,
            at_exact=at_exact,
            consistency=consistency,
        )
    ).parsed
