"""The README's Figure 1 walkthrough, through the generated Python client, against the real binary.

Against `earshot serve` (tests/server.py: EARSHOT_BIN, default target/debug/earshot), creates the
store, the people, Bob's identity, the items and the grant with the client's typed models, and
asserts the decisions the README promises. Run it with clients/python/test.sh.
"""

from __future__ import annotations

import unittest

from earshot_client import Client
from earshot_client.api.grants import grant_item
from earshot_client.api.items import create_item, expand_item
from earshot_client.api.participants import bind_identity, create_participant
from earshot_client.api.reads import check, lookup
from earshot_client.api.stores import create_store, get_store
from earshot_client.models import (
    AudienceViewSource,
    Basis,
    CheckRequest,
    CheckResponse,
    ConsistencyAtLeast,
    Container,
    Error,
    ErrorErrorCode,
    ExpandResponse,
    Identity,
    LookupRequest,
    LookupResponse,
    NewGrant,
    NewIdentity,
    NewItem,
    NewParticipant,
    NewStore,
    OriginKeyword,
    ParticipantKind,
    Reason,
    Viewers,
    WatchChange,
    WatchHeartbeat,
    WriteOutcome,
    WriteOutcomeOutcome,
)
from earshot_client.types import UNSET, Response
from earshot_client_extras.watch import parse_watch_event, watch
from tests.server import ServerTestCase

STORE = "demo"


class Figure1(ServerTestCase):
    def created(self, response: Response[Error | WriteOutcome], *ids: str) -> WriteOutcome:
        self.assertEqual(response.status_code, 201, response.content)
        outcome = response.parsed
        assert isinstance(outcome, WriteOutcome), response.content
        self.assertEqual(outcome.outcome, WriteOutcomeOutcome.CREATED)
        if ids:
            self.assertEqual(outcome.ids, list(ids))
        self.assertGreater(outcome.revision, 0)
        return outcome

    def check(self, item: str, *participants: str) -> CheckResponse:
        response = check.sync_detailed(
            STORE,
            client=self.client,
            body=CheckRequest(item=item, container=Container(owner="owner", viewers=Viewers(participants=list(participants)))),
        )
        self.assertEqual(response.status_code, 200, response.content)
        assert isinstance(response.parsed, CheckResponse), response.content
        return response.parsed

    def test_figure_1_walkthrough(self) -> None:
        c = self.client

        # A store, four people, and Bob's e-mail identity.
        self.created(create_store.sync_detailed(client=c, body=NewStore(id=STORE)), STORE)
        for p in ("owner", "alice", "bob", "carol"):
            self.created(create_participant.sync_detailed(STORE, client=c, body=NewParticipant(id=p, kind=ParticipantKind.PERSON)), p)
        self.created(
            bind_identity.sync_detailed(
                STORE, client=c, body=NewIdentity(transport="email", identifier="bob@example.com", participant="bob")
            ),
            "email:bob@example.com",
        )

        # f1 is said in the group {owner, alice, bob}; f2 privately by Alice; p1 is public.
        self.created(
            create_item.sync_detailed(
                STORE,
                client=c,
                body=NewItem(
                    id="f1", owner="owner", content="the offsite moved to Lisbon", origin=Viewers(participants=["alice", "bob"])
                ),
            ),
            "f1",
        )
        self.created(
            create_item.sync_detailed(
                STORE,
                client=c,
                body=NewItem(id="f2", owner="owner", content="alice is interviewing elsewhere", origin=Viewers(participants=["alice"])),
            ),
            "f2",
        )
        last = self.created(
            create_item.sync_detailed(
                STORE,
                client=c,
                body=NewItem(id="p1", owner="owner", content="the office is closed on friday", origin=OriginKeyword.PUBLIC),
            ),
            "p1",
        )

        # Bob's one-to-one, identified by his e-mail: f1 and p1 are admissible, f2 never. The lookup
        # reads at least the last write's revision (a `Consistency` of the `at_least` form).
        bob_by_email = Container(
            owner="owner", viewers=Viewers(identities=[Identity(transport="email", identifier="bob@example.com")])
        )
        found = lookup.sync(
            STORE, client=c, body=LookupRequest(container=bob_by_email, consistency=ConsistencyAtLeast(at_least=last.token))
        )
        assert isinstance(found, LookupResponse), found
        self.assertTrue(found.container.resolved)
        self.assertGreaterEqual(found.revision, last.revision)
        self.assertEqual(
            [(d.item, d.admitted, d.reason) for d in found.items],
            [("f1", True, Reason.ADMITTED_ORIGIN), ("p1", True, Reason.ADMITTED_PUBLIC)],
        )
        f2_for_bob = self.check("f2", "bob")
        self.assertFalse(f2_for_bob.admitted)
        self.assertEqual(f2_for_bob.reason, Reason.DENIED_NOT_IN_AUDIENCE)

        # A viewer nobody can resolve: the container fails closed to public items.
        unknown = Container(owner="owner", viewers=Viewers(identities=[Identity(transport="sms", identifier="+15550000000")]))
        found = lookup.sync(STORE, client=c, body=LookupRequest(container=unknown, consistency="fully_consistent"))
        assert isinstance(found, LookupResponse), found
        self.assertFalse(found.container.resolved)
        self.assertEqual([(d.item, d.reason) for d in found.items], [("p1", Reason.ADMITTED_PUBLIC)])

        # An explicit grant widens f2 to exactly {owner, alice, carol}: Carol may now see it, Bob still not.
        granted = grant_item.sync_detailed(
            STORE, "f2", client=c, body=NewGrant(members=["alice", "carol"], reason="alice asked to loop carol in")
        )
        self.assertEqual(granted.status_code, 201, granted.content)
        assert isinstance(granted.parsed, WriteOutcome)
        self.assertEqual(granted.parsed.outcome, WriteOutcomeOutcome.GRANTED)
        ids = granted.parsed.ids
        assert isinstance(ids, list) and len(ids) == 1, granted.content
        grant = ids[0]

        carol = self.check("f2", "carol")
        self.assertTrue(carol.admitted)
        self.assertEqual(carol.reason, Reason.ADMITTED_GRANT)
        self.assertEqual(carol.basis, Basis.GRANT)
        self.assertEqual(carol.grant, grant)
        both = self.check("f2", "bob", "carol")
        self.assertFalse(both.admitted)
        self.assertEqual(both.reason, Reason.DENIED_NOT_IN_AUDIENCE)

        audiences = expand_item.sync(STORE, "f2", client=c)
        assert isinstance(audiences, ExpandResponse), audiences
        self.assertEqual(
            [(a.source, a.grant, a.members) for a in audiences.audiences],
            [(AudienceViewSource.ORIGIN, UNSET, ["alice", "owner"]), (AudienceViewSource.GRANT, grant, ["alice", "carol", "owner"])],
        )

    def test_watch_events_are_typed(self) -> None:
        # The NDJSON watch stream, read through the hand-written extra over the generated models.
        c = self.client
        store = "watched"
        made = self.created(create_store.sync_detailed(client=c, body=NewStore(id=store)), store)
        self.created(create_participant.sync_detailed(store, client=c, body=NewParticipant(id="dana", kind=ParticipantKind.PERSON)), "dana")
        kinds: list[str] = []
        for event in watch(c, store, after=made.token):
            assert isinstance(event, WatchChange), event
            kinds.append(event.change.kind)
            self.assertEqual(event.token.split(".")[0], str(event.revision))
            if event.change.kind == "participant_created":
                self.assertEqual(event.change["participant"], "dana")
                break
        self.assertEqual(kinds, ["participant_created"])
        beat = parse_watch_event('{"heartbeat": {"revision": 2, "token": "2.abc"}}')
        assert isinstance(beat, WatchHeartbeat)
        self.assertEqual(beat.heartbeat.revision, 2)
        refused = next(watch(c, "no-such-store"))
        assert isinstance(refused, Error)
        self.assertEqual(refused.error.code, ErrorErrorCode.STORE_NOT_FOUND)
        with self.assertRaises(ValueError):
            parse_watch_event("[1]")

    def test_errors_are_typed(self) -> None:
        # Without the token: 401, parsed into the typed error with its stable code.
        anonymous = Client(base_url=self.base_url)
        self.addCleanup(anonymous.get_httpx_client().close)
        response = get_store.sync_detailed(STORE, client=anonymous)
        self.assertEqual(response.status_code, 401)
        assert isinstance(response.parsed, Error), response.content
        self.assertEqual(response.parsed.error.code, ErrorErrorCode.UNAUTHENTICATED)
        # A store that does not exist: 404 `store_not_found`.
        response = get_store.sync_detailed("no-such-store", client=self.client)
        self.assertEqual(response.status_code, 404)
        assert isinstance(response.parsed, Error), response.content
        self.assertEqual(response.parsed.error.code, ErrorErrorCode.STORE_NOT_FOUND)


if __name__ == "__main__":
    unittest.main()
