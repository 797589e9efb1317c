"""`earshot mcp` under the official MCP Python SDK, as a real client of the built binary.

Plays the paper's Figure 1 through the tools (remember the group and private items, recall for the
group: only admissible items; recall with an unresolved viewer: public items only; explain a
denial; a grant that then admits; revoke it; refused calls answered as tool errors with the API's
code) over stdio in both modes: embedded (`--data-dir`) and against a running `earshot serve`
(`--url`, admin and reader tokens). Then a streamable-HTTP smoke test (`--listen`). Run it with
tests/mcp/test.sh (EARSHOT_BIN: the binary).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.request
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

BIN = os.environ.get("EARSHOT_BIN", "target/debug/earshot")
STORE = "demo"
ADMIN = "mcp-test-admin-token-0123456789"
READER = "mcp-test-reader-token-0123456789"
TOOLS = {"remember", "recall", "explain", "grant", "revoke"}
GROUP = {"owner": "owner", "participants": ["alice", "bob"]}
UNRESOLVED = {"owner": "owner", "participants": ["bob"], "identities": [{"transport": "sms", "identifier": "+15550000000"}]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Serve:
    """`earshot serve` on a free loopback port over a data directory, optionally with tokens."""

    def __init__(self, data: str, tokens: bool) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        args = [BIN, "serve", "--bind", f"127.0.0.1:{self.port}", "--data", data]
        if tokens:
            config = os.path.join(data + "-config.toml")
            with open(config, "w") as f:
                f.write(f'[[tokens]]\nname = "ops"\ntoken = "{ADMIN}"\nscope = "admin"\n\n')
                f.write(f'[[tokens]]\nname = "agent"\ntoken = "{READER}"\nscope = "reader"\nstores = ["{STORE}"]\n')
            args += ["--config", config]
        self.token = ADMIN if tokens else None
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(self.base + "/healthz", timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("earshot serve did not start")
                time.sleep(0.1)

    def post(self, path: str, body: dict[str, Any]) -> None:
        req = urllib.request.Request(self.base + path, data=json.dumps(body).encode(), method="POST")
        req.add_header("content-type", "application/json")
        if self.token:
            req.add_header("authorization", f"Bearer {self.token}")
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert resp.status == 201, resp.status

    def setup_figure1(self) -> None:
        """The store, four people and Bob's e-mail identity: what the tools do not create."""
        self.post("/v1/stores", {"id": STORE})
        for p in ("owner", "alice", "bob", "carol"):
            self.post(f"/v1/stores/{STORE}/participants", {"id": p, "kind": "person"})
        self.post(f"/v1/stores/{STORE}/identities", {"transport": "email", "identifier": "bob@example.com", "participant": "bob"})

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def stdio(*args: str) -> StdioServerParameters:
    # Verbose logs on purpose: they must all go to stderr, or the client could not parse stdout.
    return StdioServerParameters(command=BIN, args=["mcp", "--store", STORE, *args], env={"RUST_LOG": "info"})


class McpCase(unittest.TestCase):
    async def figure1(self, client: Client) -> None:
        tools = await client.list_tools()
        self.assertEqual({t.name for t in tools.tools}, TOOLS)
        for t in tools.tools:
            self.assertTrue(t.description, t.name)
            self.assertEqual(t.input_schema["type"], "object", t.name)
            self.assertFalse(t.input_schema.get("additionalProperties", True), t.name)
        recall_schema = next(t for t in tools.tools if t.name == "recall").input_schema
        self.assertEqual(set(recall_schema["required"]), {"owner"})

        # Figure 1: f1 said in the group, f2 privately by Alice, p1 public, n1 the owner's own note.
        f1 = await self.acall(client, "remember", {"id": "f1", "owner": "owner", "participants": ["alice", "bob"], "content": "The team offsite moved to Lisbon.", "embedding": [0.6, 0.8]})
        self.assertEqual((f1["item"], f1["outcome"]), ("f1", "created"))
        await self.acall(client, "remember", {"id": "f2", "owner": "owner", "participants": ["alice"], "content": "Alice is interviewing elsewhere and may skip the offsite.", "embedding": [1.0, 0.0]})
        await self.acall(client, "remember", {"id": "p1", "owner": "owner", "visibility": "public", "content": "The offsite agenda is public.", "embedding": [0.0, 1.0]})
        await self.acall(client, "remember", {"id": "n1", "owner": "owner", "visibility": "owner_private", "content": "My own offsite budget note."})
        # A remembered item identified by a transport identity binds it now (Bob's e-mail).
        f3 = await self.acall(client, "remember", {"owner": "owner", "identities": [{"transport": "email", "identifier": "bob@example.com"}], "content": "Bob prefers the offsite in spring."})
        self.assertTrue(f3["item"])

        # Recall for the group: only admissible items, each with its reason, basis and role.
        group = await self.acall(client, "recall", {**GROUP, "query": "offsite", "k": 10})
        self.assertTrue(group["resolved"])
        self.assertNotIn("note", group)
        got = {i["item"]: i for i in group["items"]}
        self.assertEqual(set(got), {"f1", "p1"})
        self.assertEqual((got["f1"]["reason"], got["f1"]["basis"]), ("admitted_origin", "origin"))
        self.assertEqual(got["p1"]["reason"], "admitted_public")
        self.assertIn(got["f1"]["role"], ("instruction", "data"))
        self.assertIn("Lisbon", got["f1"]["content"])

        # Dense recall: Alice's private f2 is the best match by embedding and still never appears;
        # hybrid fuses the two rankings over the same admissible items.
        dense = await self.acall(client, "recall", {**GROUP, "query_embedding": [1.0, 0.0], "k": 10})
        self.assertEqual([i["item"] for i in dense["items"]], ["f1", "p1"])
        hybrid = await self.acall(client, "recall", {**GROUP, "query": "offsite", "query_embedding": [1.0, 0.0], "k": 10})
        self.assertEqual({i["item"] for i in hybrid["items"]}, {"f1", "p1"})
        await self.arefused(client, "recall", {**GROUP, "query_embedding": [1.0, 0.0, 0.0]}, "embedding_dimension_mismatch")

        # Bob alone, by his e-mail: f1, f3 and p1, never f2.
        bob = await self.acall(client, "recall", {"owner": "owner", "identities": [{"transport": "email", "identifier": "bob@example.com"}], "query": "offsite", "k": 10})
        self.assertEqual({i["item"] for i in bob["items"]}, {"f1", f3["item"], "p1"})

        # An unresolved viewer: the container fails closed to public items, and says so.
        unresolved = await self.acall(client, "recall", {**UNRESOLVED, "query": "offsite", "k": 10})
        self.assertFalse(unresolved["resolved"])
        self.assertEqual(unresolved["container"]["reason"], "unknown_identity")
        self.assertIn("UNRESOLVED", unresolved["note"])
        self.assertEqual([i["item"] for i in unresolved["items"]], ["p1"])

        # Explain a denial, and an unresolved container's.
        denied = await self.acall(client, "explain", {"owner": "owner", "participants": ["bob"], "item": "f2"})
        self.assertEqual((denied["admitted"], denied["reason"]), (False, "denied_not_in_audience"))
        self.assertIn("Denied", denied["explanation"])
        fail_closed = await self.acall(client, "explain", {**UNRESOLVED, "item": "f1"})
        self.assertEqual(fail_closed["reason"], "denied_unresolved_viewers")
        self.assertIn("UNRESOLVED", fail_closed["explanation"])

        # A grant widens f2 to exactly {owner, alice, carol}: Carol is admitted, Bob with Carol is not.
        granted = await self.acall(client, "grant", {"item": "f2", "members": ["alice", "carol"], "reason": "alice asked to loop carol in"})
        self.assertEqual(granted["outcome"], "granted")
        grant = granted["grant"]
        carol = await self.acall(client, "explain", {"owner": "owner", "participants": ["carol"], "item": "f2"})
        self.assertEqual((carol["admitted"], carol["reason"], carol["basis"], carol["grant"]), (True, "admitted_grant", "grant", grant))
        both = await self.acall(client, "explain", {"owner": "owner", "participants": ["bob", "carol"], "item": "f2"})
        self.assertEqual(both["reason"], "denied_not_in_audience")
        recalled = await self.acall(client, "recall", {"owner": "owner", "participants": ["carol"], "query": "interviewing"})
        self.assertEqual([(i["item"], i["basis"]) for i in recalled["items"]], [("f2", "grant")])

        # Revoke it: Carol is denied again.
        revoked = await self.acall(client, "revoke", {"grant": grant})
        self.assertEqual(revoked["outcome"], "revoked")
        again = await self.acall(client, "explain", {"owner": "owner", "participants": ["carol"], "item": "f2"})
        self.assertEqual(again["reason"], "denied_not_in_audience")

        # Refusals are tool errors with the API's code, never protocol errors or crashes.
        await self.arefused(client, "grant", {"item": "f2", "members": ["ghost"]}, "participant_not_found")
        await self.arefused(client, "explain", {"owner": "owner", "item": "nope"}, "item_not_found")
        await self.arefused(client, "revoke", {"grant": grant}, "grant_already_revoked")
        await self.arefused(client, "remember", {"owner": "owner", "participants": ["mallory"], "content": "x"}, "origin_unresolved")
        # ... and so are refusals of the tool layer itself (before any call).
        await self.arefused(client, "remember", {"owner": "owner", "content": "who was there?"}, "invalid_request")
        await self.arefused(client, "remember", {"owner": "owner", "visibility": "public", "participants": ["bob"], "content": "x"}, "invalid_request")
        await self.arefused(client, "remember", {"owner": "owner", "visibility": "public", "content": "x" * 65537}, "limit_exceeded")
        await self.arefused(client, "recall", {"owner": "owner", "query": "  "}, "invalid_request")
        await self.arefused(client, "recall", {"owner": "owner", "query": "x", "viewers": ["bob"]}, "invalid_request")
        await self.arefused(client, "recall", {"owner": "owner", "query": "x", "participants": ["p"] * 257}, "limit_exceeded")
        # The session survives them all.
        self.assertEqual(len((await self.acall(client, "recall", {**GROUP, "query": "offsite"}))["items"]), 2)

    async def reader_refused(self, client: Client) -> None:
        """A reader's tools read, and every write is refused with `forbidden`."""
        ok = await self.acall(client, "recall", {**GROUP, "query": "offsite"})
        self.assertEqual({i["item"] for i in ok["items"]}, {"f1", "p1"})
        await self.arefused(client, "remember", {"owner": "owner", "visibility": "public", "content": "x"}, "forbidden")
        await self.arefused(client, "grant", {"item": "f2", "members": ["bob"]}, "forbidden")

    async def acall(self, client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        result = await client.call_tool(tool, args)
        self.assertFalse(result.is_error, f"{tool}: {result.content}")
        assert isinstance(result.structured_content, dict), result
        return result.structured_content

    async def arefused(self, client: Client, tool: str, args: dict[str, Any], code: str) -> dict[str, Any]:
        result = await client.call_tool(tool, args)
        self.assertTrue(result.is_error, f"{tool}: {result.content}")
        assert isinstance(result.structured_content, dict), result
        self.assertEqual(result.structured_content["error"]["code"], code, result.structured_content)
        text = getattr(result.content[0], "text", "")
        self.assertTrue(text.startswith(f"{code}: "), text)
        return result.structured_content


class Embedded(McpCase):
    def test_figure1_embedded_stdio(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "data")
            # The tools create no store or participant: set them up through the service, then stop it
            # (sled is single-process) and serve MCP on the same directory.
            serve = Serve(data, tokens=False)
            try:
                serve.setup_figure1()
            finally:
                serve.stop()

            async def run() -> None:
                async with Client(stdio("--data-dir", data)) as client:
                    await self.figure1(client)
                async with Client(stdio("--data-dir", data, "--scope", "reader")) as client:
                    await self.reader_refused(client)

            anyio.run(run)


class Remote(McpCase):
    def test_figure1_remote_stdio_and_http(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            serve = Serve(os.path.join(tmp, "data"), tokens=True)
            try:
                serve.setup_figure1()

                async def run() -> None:
                    async with Client(stdio("--url", serve.base, "--token", ADMIN)) as client:
                        await self.figure1(client)
                    async with Client(stdio("--url", serve.base, "--token", READER)) as client:
                        await self.reader_refused(client)
                    # No token at all: the service refuses every call, as a tool error.
                    async with Client(stdio("--url", serve.base)) as client:
                        await self.arefused(client, "recall", {**GROUP, "query": "offsite"}, "unauthenticated")

                anyio.run(run)
                self.streamable_http(serve)
            finally:
                serve.stop()

    def streamable_http(self, serve: Serve) -> None:
        """`--listen 127.0.0.1:0`: the SDK's streamable-HTTP client lists the tools and calls them."""
        proc = subprocess.Popen(
            [BIN, "mcp", "--store", STORE, "--url", serve.base, "--token", READER, "--listen", "127.0.0.1:0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            # Warnings only, so that the undrained stderr pipe never fills.
            env={**os.environ, "RUST_LOG": "warn"},
        )
        try:
            assert proc.stderr is not None
            url = ""
            for line in proc.stderr:
                m = re.search(r"(http://\S+/mcp)", line)
                if m:
                    url = m.group(1)
                    break
            self.assertTrue(url, "no address on stderr")

            async def run() -> None:
                async with Client(url) as client:
                    tools = await client.list_tools()
                    self.assertEqual({t.name for t in tools.tools}, TOOLS)
                    await self.reader_refused(client)

            anyio.run(run)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        # Nothing but the protocol (here: nothing) on stdout.
        assert proc.stdout is not None
        self.assertEqual(proc.stdout.read(), "")

    def test_listen_refuses_non_loopback(self) -> None:
        out = subprocess.run([BIN, "mcp", "--store", STORE, "--url", "http://127.0.0.1:9", "--listen", "0.0.0.0:0"], capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 1)
        self.assertIn("loopback", out.stderr)
        self.assertEqual(out.stdout, "")


if __name__ == "__main__":
    unittest.main()
