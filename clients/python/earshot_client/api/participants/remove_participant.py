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
    participant: str,
    *,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/v1/stores/{store}/participants/{participant}".format(
            store=quote(str(store), safe=""),
            participant=quote(str(participant), safe=""),
        ),
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
    participant: str,
    *,
    client: AuthenticatedClient | Client,
    idempotency_key: str | Unset = UNSET,
) -> Response[Error | WriteOutcome]:
    """Remove a participant (member removal, SPEC §1.8)

     In one write: deletes the participant from every audience and grant containing it and unbinds its
    identities; the items it authored keep it as a tombstoned author (data, `author_removed`, never an
    instruction), and its trust delegations, to or from it, end (revoked in this revision). Consents it
    gave stay recorded; a grant still waiting for its consent stays pending. Relation grants to or from
    it end (revoked in this revision); the capabilities it holds are revoked, so what it delegated from
    them is invalid through them (`invalidated` lists every capability this removal made invalid); the
    uses it made stay recorded; every record keeps its name, marked removed. Refused for a participant
    that owns items (`participant_owns_items`), that owns a device (`participant_owns_devices`), or that
    is a device, whether `POST /devices` or `POST /participants` made it (`participant_is_device`).
    Needs the `admin` scope on the store.

    Args:
        store (str):
        participant (str):
        idempotency_key (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | WriteOutcome]
    """

    kwargs = _get_kwargs(
        store=store,
        participant=participant,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    store: str,
    participant: str,
    *,
    client: AuthenticatedClient | Client,
    idempotency_key: str | Unset = UNSET,
) -> Error | WriteOutcome | None:
    """Remove a participant (member removal, SPEC §1.8)

     In one write: deletes the participant from every audience and grant containing it and unbinds its
    identities; the items it authored keep it as a tombstoned author (data, `author_removed`, never an
    instruction), and its trust delegations, to or from it, end (revoked in this revision). Consents it
    gave stay recorded; a grant still waiting for its consent stays pending. Relation grants to or from
    it end (revoked in this revision); the capabilities it holds are revoked, so what it delegated from
    them is invalid through them (`invalidated` lists every capability this removal made invalid); the
    uses it made stay recorded; every record keeps its name, marked removed. Refused for a participant
    that owns items (`participant_owns_items`), that owns a device (`participant_owns_devices`), or that
    is a device, whether `POST /devices` or `POST /participants` made it (`participant_is_device`).
    Needs the `admin` scope on the store.

    Args:
        store (str):
        participant (str):
        idempotency_key (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | WriteOutcome
    """

    return sync_detailed(
        store=store,
        participant=participant,
        client=client,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    store: str,
    participant: str,
    *,
    client: AuthenticatedClient | Client,
    idempotency_key: str | Unset = UNSET,
) -> Response[Error | WriteOutcome]:
    """Remove a participant (member removal, SPEC §1.8)

     In one write: deletes the participant from every audience and grant containing it and unbinds its
    identities; the items it authored keep it as a tombstoned author (data, `author_removed`, never an
    instruction), and its trust delegations, to or from it, end (revoked in this revision). Consents it
    gave stay recorded; a grant still waiting for its consent stays pending. Relation grants to or from
    it end (revoked in this revision); the capabilities it holds are revoked, so what it delegated from
    them is invalid through them (`invalidated` lists every capability this removal made invalid); the
    uses it made stay recorded; every record keeps its name, marked removed. Refused for a participant
    that owns items (`participant_owns_items`), that owns a device (`participant_owns_devices`), or that
    is a device, whether `POST /devices` or `POST /participants` made it (`participant_is_device`).
    Needs the `admin` scope on the store.

    Args:
        store (str):
        participant (str):
        idempotency_key (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | WriteOutcome]
    """

    kwargs = _get_kwargs(
        store=store,
        participant=participant,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    store: str,
    participant: str,
    *,
    client: AuthenticatedClient | Client,
    idempotency_key: str | Unset = UNSET,
) -> Error | WriteOutcome | None:
    """Remove a participant (member removal, SPEC §1.8)

     In one write: deletes the participant from every audience and grant containing it and unbinds its
    identities; the items it authored keep it as a tombstoned author (data, `author_removed`, never an
    instruction), and its trust delegations, to or from it, end (revoked in this revision). Consents it
    gave stay recorded; a grant still waiting for its consent stays pending. Relation grants to or from
    it end (revoked in this revision); the capabilities it holds are revoked, so what it delegated from
    them is invalid through them (`invalidated` lists every capability this removal made invalid); the
    uses it made stay recorded; every record keeps its name, marked removed. Refused for a participant
    that owns items (`participant_owns_items`), that owns a device (`participant_owns_devices`), or that
    is a device, whether `POST /devices` or `POST /participants` made it (`participant_is_device`).
    Needs the `admin` scope on the store.

    Args:
        store (str):
        participant (str):
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
            participant=participant,
            client=client,
            idempotency_key=idempotency_key,
        )
    ).parsed
