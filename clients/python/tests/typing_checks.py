"""Type-level checks of the generated client, run by mypy (clients/python/test.sh), never executed.

Each line marked `type: ignore[...]` is a misuse the client's types must refuse: mypy runs with
`--strict` (so `--warn-unused-ignores`), and an ignore that is not needed is an error. If the
generated models lost their types (everything `Any`), these ignores would be unused and the check
would fail. The lines without an ignore must pass as they are: the façade's answers are the
success models themselves (were they `X | Error | None`, `.admitted` would be refused).
"""

from earshot_client.api.stores import get_store
from earshot_client.models import (
    CheckRequest,
    CheckResponse,
    Container,
    LookupRequest,
    NewItem,
    NewParticipant,
    OriginKeyword,
    Reason,
    StoreInfo,
    Viewers,
)
from earshot_client_extras import Earshot, EarshotError, unwrap


def misuses(response: CheckResponse) -> None:
    NewItem(owner="owner", origin=["alice"])  # type: ignore[arg-type]
    NewItem(owner="owner", origin="everyone")  # type: ignore[arg-type]
    NewItem(owner="owner", origin=OriginKeyword.PUBLIC, content=3)  # type: ignore[arg-type]
    NewItem(origin=OriginKeyword.PUBLIC)  # type: ignore[call-arg]
    NewParticipant(id="bob", kind="robot")  # type: ignore[arg-type]
    Container(owner="owner", viewers={"participants": ["bob"]})  # type: ignore[arg-type]
    Viewers(participants="bob")  # type: ignore[arg-type]
    admitted: str = response.admitted  # type: ignore[assignment]
    reason: Reason = response.reason
    response.no_such_field  # type: ignore[attr-defined]
    del admitted, reason


def facade(earshot: Earshot) -> None:
    # Answers are the success models: no `Error`, no `None` to rule out first.
    answer = earshot.check("demo", CheckRequest(item="f2", container=Container(owner="owner")))
    admitted: bool = answer.admitted
    token: str = earshot.create_item("demo", NewItem(owner="owner", origin=OriginKeyword.PUBLIC)).token
    info: StoreInfo = unwrap(get_store.sync_detailed("demo", client=earshot.client))
    items: int = unwrap(get_store.sync_detailed("demo", client=earshot.client)).items
    del admitted, token, info, items
    # The bodies are the generated models, each for its own call.
    earshot.check("demo", LookupRequest(container=Container(owner="owner")))  # type: ignore[arg-type]
    earshot.create_item("demo", {"owner": "owner", "origin": "public"})  # type: ignore[arg-type]
    earshot.create_item("demo", NewItem(owner="owner", origin=OriginKeyword.PUBLIC), idempotency_key=1)  # type: ignore[arg-type]
    wrong: str = unwrap(get_store.sync_detailed("demo", client=earshot.client)).items  # type: ignore[assignment]
    del wrong
    try:
        pass
    except EarshotError as e:
        status: int = e.status
        code: str = e.code
        details: dict[str, object] = e.details
        not_a_status: str = e.status  # type: ignore[assignment]
        del status, code, details, not_a_status
