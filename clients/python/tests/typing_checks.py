"""Type-level checks of the generated client, run by mypy (clients/python/test.sh), never executed.

Each line marked `type: ignore[...]` is a misuse the client's types must refuse: mypy runs with
`--strict` (so `--warn-unused-ignores`), and an ignore that is not needed is an error. If the
generated models lost their types (everything `Any`), these ignores would be unused and the check
would fail.
"""

from earshot_client.models import (
    CheckResponse,
    Container,
    NewItem,
    NewParticipant,
    OriginKeyword,
    Reason,
    Viewers,
)


def misuses(response: CheckResponse) -> None:
    NewItem(owner="owner", origin=["alice"])  # type: ignore[arg-type]
    NewItem(owner="owner", origin=OriginKeyword.PUBLIC, content=3)  # type: ignore[arg-type]
    NewItem(origin=OriginKeyword.PUBLIC)  # type: ignore[call-arg]
    NewParticipant(id="bob", kind="robot")  # type: ignore[arg-type]
    Container(owner="owner", viewers={"participants": ["bob"]})  # type: ignore[arg-type]
    Viewers(participants="bob")  # type: ignore[arg-type]
    admitted: str = response.admitted  # type: ignore[assignment]
    reason: Reason = response.reason
    response.no_such_field  # type: ignore[attr-defined]
    del admitted, reason
