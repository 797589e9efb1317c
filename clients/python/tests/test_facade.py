"""The façade (`earshot_client_extras.Earshot`), the documented way of calling, against the real binary.

The README's Figure 1 walkthrough again, through `Earshot`'s methods, whose answers are the success
models themselves; then an authorization, the watch stream, and every kind of error answer raised
as `EarshotError` with its code, message, details and status. Run it with clients/python/test.sh.
"""

from __future__ import annotations

import unittest

import httpx

from earshot_client.api.devices import create_device
from earshot_client.api.items import expand_item
from earshot_client.api.stores import get_store
from earshot_client.models import (
    AudienceViewSource,
    AuthorityOwner,
    AuthorizeRequest,
    AuthReason,
    CheckRequest,
    CheckResponse,
    ConsistencyAtLeast,
    Container,
    ErrorErrorCode,
    Identity,
    LookupRequest,
    NewDevice,
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
    WriteOutcome,
    WriteOutcomeOutcome,
)
from earshot_client.types import UNSET
from earshot_client_extras import UNEXPECTED_RESPONSE, Earshot, EarshotError, unwrap
from tests.server import TOKEN, ServerTestCase

STORE = "facade"


class Facade(ServerTestCase):
    earshot: Earshot

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.earshot = Earshot(cls.base_url, token=TOKEN)
        cls.addClassCleanup(cls.earshot.close)

    def created(self, outcome: WriteOutcome, *ids: str) -> WriteOutcome:
        self.assertEqual(outcome.outcome, WriteOutcomeOutcome.CREATED)
        self.assertEqual(outcome.ids, list(ids))
        return outcome

    def check(self, item: str, *participants: str) -> CheckResponse:
        viewers = Viewers(participants=list(participants))
        return self.earshot.check(STORE, CheckRequest(item=item, container=Container(owner="owner", viewers=viewers)))

    def test_figure_1_walkthrough(self) -> None:
        e = self.earshot
        self.created(e.create_store(NewStore(id=STORE)), STORE)
        for p in ("owner", "alice", "bob", "carol"):
            self.created(e.create_participant(STORE, NewParticipant(id=p, kind=ParticipantKind.PERSON)), p)
        bob_email = NewIdentity(transport="email", identifier="bob@example.com", participant="bob")
        self.created(e.bind_identity(STORE, bob_email), "email:bob@example.com")

        # f1 is said in the group {owner, alice, bob}; f2 privately by Alice; p1 is public.
        self.created(e.create_item(STORE, NewItem(id="f1", owner="owner", origin=Viewers(participants=["alice", "bob"]))), "f1")
        self.created(e.create_item(STORE, NewItem(id="f2", owner="owner", origin=Viewers(participants=["alice"]))), "f2")
        last = e.create_item(STORE, NewItem(id="p1", owner="owner", origin=OriginKeyword.PUBLIC), idempotency_key="p1-once")
        self.created(last, "p1")
        # The same key and body again: the first answer, nothing written.
        again = e.create_item(STORE, NewItem(id="p1", owner="owner", origin=OriginKeyword.PUBLIC), idempotency_key="p1-once")
        self.assertEqual((again.outcome, again.ids, again.token), (last.outcome, last.ids, last.token))

        bob = Container(owner="owner", viewers=Viewers(identities=[Identity(transport="email", identifier="bob@example.com")]))
        found = e.lookup(STORE, LookupRequest(container=bob, consistency=ConsistencyAtLeast(at_least=last.token)))
        self.assertTrue(found.container.resolved)
        self.assertEqual(
            [(d.item, d.admitted, d.reason) for d in found.items],
            [("f1", True, Reason.ADMITTED_ORIGIN), ("p1", True, Reason.ADMITTED_PUBLIC)],
        )
        f2_for_bob = self.check("f2", "bob")
        self.assertEqual((f2_for_bob.admitted, f2_for_bob.reason), (False, Reason.DENIED_NOT_IN_AUDIENCE))

        granted = e.grant(STORE, "f2", NewGrant(members=["alice", "carol"], reason="alice asked to loop carol in"))
        self.assertEqual(granted.outcome, WriteOutcomeOutcome.GRANTED)
        assert isinstance(granted.ids, list) and len(granted.ids) == 1
        grant = granted.ids[0]
        carol = self.check("f2", "carol")
        self.assertEqual((carol.admitted, carol.reason, carol.grant), (True, Reason.ADMITTED_GRANT, grant))
        self.assertFalse(self.check("f2", "bob", "carol").admitted)

        # Any other operation: the generated module with `earshot.client`, its answer unwrapped.
        audiences = unwrap(expand_item.sync_detailed(STORE, "f2", client=e.client))
        self.assertEqual(
            [(a.source, a.grant, a.members) for a in audiences.audiences],
            [(AudienceViewSource.ORIGIN, UNSET, ["alice", "owner"]), (AudienceViewSource.GRANT, grant, ["alice", "carol", "owner"])],
        )

    def test_authorize(self) -> None:
        e = self.earshot
        store = "facade-devices"
        e.create_store(NewStore(id=store))
        e.create_participant(store, NewParticipant(id="me", kind=ParticipantKind.PERSON))
        unwrap(create_device.sync_detailed(store, client=e.client, body=NewDevice(id="fridge", owner="me")))
        mine = e.authorize(store, AuthorizeRequest(principal="me", device="fridge", path="medication/insulin", action="read"))
        self.assertTrue(mine.allowed)
        self.assertEqual(mine.reason, AuthReason.ALLOWED_OWNER)
        assert isinstance(mine.authority, AuthorityOwner), mine.authority
        self.assertEqual((mine.authority.device, mine.authority.owner), ("fridge", "me"))
        # A denial is an answer, not an error.
        theirs = e.authorize(store, AuthorizeRequest(principal="me", device="no-such", path="a", action="read"))
        self.assertEqual((theirs.allowed, theirs.reason), (False, AuthReason.DENIED_UNKNOWN_DEVICE))

    def test_watch(self) -> None:
        e = self.earshot
        store = "facade-watched"
        made = e.create_store(NewStore(id=store))
        e.create_participant(store, NewParticipant(id="dana", kind=ParticipantKind.PERSON))
        for event in e.watch(store, after=made.token):
            assert isinstance(event, WatchChange), event
            self.assertEqual(event.change.kind, "participant_created")
            break
        with self.assertRaises(EarshotError) as refused:
            next(e.watch("no-such-store"))
        self.assertEqual((refused.exception.status, refused.exception.code), (404, ErrorErrorCode.STORE_NOT_FOUND))

    def test_errors_raise(self) -> None:
        # Without the token: 401.
        with Earshot(self.base_url) as anonymous, self.assertRaises(EarshotError) as e:
            anonymous.check(STORE, CheckRequest(item="f1"))
        self.assertEqual((e.exception.status, e.exception.code), (401, ErrorErrorCode.UNAUTHENTICATED))
        self.assertIsInstance(e.exception.message, str)
        # A store that does not exist: 404, through the façade and through `unwrap`.
        with self.assertRaises(EarshotError) as e:
            self.earshot.check("no-such-store", CheckRequest(item="f1"))
        self.assertEqual((e.exception.status, e.exception.code), (404, "store_not_found"))
        with self.assertRaises(EarshotError) as e:
            unwrap(get_store.sync_detailed("no-such-store", client=self.earshot.client))
        self.assertEqual((e.exception.status, e.exception.code), (404, ErrorErrorCode.STORE_NOT_FOUND))
        # A malformed id: 400 `invalid_id`, its details a dict.
        with self.assertRaises(EarshotError) as e:
            self.earshot.create_store(NewStore(id="no/such"))
        self.assertEqual((e.exception.status, e.exception.code), (400, ErrorErrorCode.INVALID_ID))
        self.assertIsInstance(e.exception.details, dict)

    def test_error_bodies_the_client_does_not_know(self) -> None:
        newer = EarshotError.from_body(b'{"error": {"code": "from_the_future", "message": "m", "details": {"a": 1}}}', 409)
        self.assertEqual((newer.code, newer.message, newer.details, newer.status), ("from_the_future", "m", {"a": 1}, 409))
        self.assertNotIsInstance(newer.code, ErrorErrorCode)
        known = EarshotError.from_body(b'{"error": {"code": "store_not_found", "message": "m", "details": {}}}', 404)
        self.assertIs(known.code, ErrorErrorCode.STORE_NOT_FOUND)
        proxy = EarshotError.from_body(b"<html>502 Bad Gateway</html>", 502)
        self.assertEqual((proxy.code, proxy.status), (UNEXPECTED_RESPONSE, 502))
        self.assertIn("502 Bad Gateway", proxy.message)

    def test_an_answer_that_is_not_json_raises(self) -> None:
        # Through the façade: a proxy's page in place of the service's answer.
        def proxy(request: httpx.Request) -> httpx.Response:
            return httpx.Response(502, text="bad gateway", request=request)

        earshot = Earshot("http://earshot.invalid", token=TOKEN)
        earshot.client.set_httpx_client(httpx.Client(base_url="http://earshot.invalid", transport=httpx.MockTransport(proxy)))
        self.addCleanup(earshot.close)
        with self.assertRaises(EarshotError) as e:
            earshot.check(STORE, CheckRequest(item="f1"))
        self.assertEqual((e.exception.code, e.exception.status), (UNEXPECTED_RESPONSE, 502))


if __name__ == "__main__":
    unittest.main()
