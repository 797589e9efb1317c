"""examples/agent/agent.py: the worked example of docs/agents.md. A small agent loop with NO model
call (ScriptedModelStub plays the model from a fixed script) records the paper's Figure 1
(fixtures/01_figure1.yaml): a group chat (owner, Alice, Bob), Alice's one-to-one with the owner,
and a public note, each through the LangChain `remember` tool bound to the conversation it was
said in. Then Bob asks, in his one-to-one, where the offsite moved, and the agent recalls twice:

- through the MCP server (`earshot mcp --url ... --store demo`, the official `mcp` Python SDK
  client over stdio, tool `recall`, BM25), and
- through the LangChain retriever (`EarshotRetriever`, hybrid: BM25 and a model-free hashed
  bag-of-words embedding fused),

printing for each arm what it would have shown WITHOUT the gate (an unscoped top-k over every
remembered item: BM25, and LangChain's InMemoryVectorStore) next to what the gate allows. Exits
1 if a gated arm ever shows an item Bob may not see, or misses the group's Lisbon fact; exits 2 if
the ungated arms no longer show the leak (the example would demonstrate nothing).

    EARSHOT=target/debug/earshot examples/agent/run.sh
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import Any

import anyio
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import InMemoryVectorStore
from mcp import Client, StdioServerParameters

from earshot_agents import Container, EarshotHTTP, hashed_bow_embedding
from earshot_agents.langchain import EarshotRememberTool, EarshotRetriever
from earshot_agents.naive import unscoped_top_k
from earshot_agents.testing import Serve

STORE = "demo"
K = 3
CONVERSATIONS = {
    "group": Container(owner="owner", participants=["alice", "bob"]),
    "alice_dm": Container(owner="owner", participants=["alice"]),
    "bob_dm": Container(owner="owner", participants=["bob"]),
}
# Who says what, where. The model stub decides what the agent does with each line.
SCRIPT = [
    ("group", "alice", "Heads up everyone: the team offsite moved to Lisbon."),
    ("group", "bob", "Lisbon works for me, I'll book flights."),
    ("announcements", "owner", "The office opens at nine."),
    (
        "alice_dm",
        "alice",
        "Between us: I'm interviewing elsewhere. Wherever the team offsite did move, the offsite move won't matter to me.",
    ),
    ("bob_dm", "bob", "Where did the team offsite move?"),
]


@dataclass
class Action:
    tool: str  # "remember" or "recall"
    args: dict[str, Any]


class ScriptedModelStub:
    """NOT a model: a stub that plays one from a fixed script. A statement is to be remembered in
    the conversation it was heard in; a question is to be answered from recalled memory; an
    announcement is remembered as public. Its answer just quotes the top recalled item."""

    def decide(self, conversation: str, speaker: str, text: str) -> Action:
        if text.rstrip().endswith("?"):
            return Action("recall", {"query": text})
        if conversation == "announcements":
            return Action("remember", {"content": text, "visibility": "public"})
        return Action("remember", {"content": text})

    def answer(self, question: str, context: list[str]) -> str:
        return f"(scripted) From what you were told: {context[0]}" if context else "(scripted) I don't know."


class HashedBow(Embeddings):
    """LangChain Embeddings over the model-free hashed bag of words (for the ungated vector store)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [hashed_bow_embedding(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return hashed_bow_embedding(text)


def setup(client: EarshotHTTP) -> None:
    """What the tools do not create: the store, the people, Bob's e-mail identity (Figure 1)."""
    client.create_store(STORE)
    for p in ("owner", "alice", "bob"):
        client.add_participant(STORE, p)
    client.bind_identity(STORE, "email", "bob@example.com", "bob")


async def recall_through_mcp(binary: str, serve: Serve, container: Container, query: str) -> list[dict[str, Any]]:
    """`recall` through `earshot mcp` (remote mode, stdio), with the official MCP Python SDK."""
    params = StdioServerParameters(
        command=binary,
        args=["mcp", "--store", STORE, "--url", serve.base_url],
        env={"EARSHOT_TOKEN": serve.token, "RUST_LOG": "warn"},
    )
    async with Client(params) as client:
        args = {"owner": container.owner, "participants": list(container.participants), "query": query, "k": K}
        result = await client.call_tool("recall", args)
        if result.is_error:
            raise RuntimeError(f"recall refused: {result.content}")
        assert isinstance(result.structured_content, dict)
        if not result.structured_content["resolved"]:
            print(f"  note: {result.structured_content.get('note')}")
        return list(result.structured_content["items"])


def show(label: str, ids: list[str], memory: dict[str, tuple[str, str]], forbidden: set[str]) -> None:
    print(f"  {label}:")
    if not ids:
        print("    (nothing)")
    for i in ids:
        where, text = memory[i]
        mark = "FORBIDDEN" if i in forbidden else "ok       "
        print(f"    {mark} {i[:8]} [{where:>13}] {text}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--earshot", default=os.environ.get("EARSHOT", "target/debug/earshot"))
    binary = os.path.abspath(parser.parse_args().earshot)

    model = ScriptedModelStub()
    failures: list[str] = []
    with Serve(binary) as serve, EarshotHTTP(serve.base_url, token=serve.token) as client:
        setup(client)
        memory: dict[str, tuple[str, str]] = {}  # item -> (conversation, text): everything remembered
        question: tuple[str, str] | None = None
        print("== the conversations (the agent's tool calls come from ScriptedModelStub, not a model)")
        for conversation, speaker, text in SCRIPT:
            action = model.decide(conversation, speaker, text)
            print(f"  [{conversation:>13}] {speaker}: {text}\n  {'':>15}-> {action.tool}")
            if action.tool == "remember":
                present = CONVERSATIONS.get(conversation)
                tool = EarshotRememberTool(
                    client=client,
                    store=STORE,
                    owner="owner",
                    present=present,
                    embed=hashed_bow_embedding,
                    author=speaker,
                )
                out = tool.invoke(action.args)
                memory[out["item"]] = (conversation, text)
            else:
                question = (conversation, action.args["query"])
        assert question is not None
        conversation, query = question
        bob = CONVERSATIONS[conversation]
        forbidden = {i for i, (where, _) in memory.items() if where == "alice_dm"}
        entitled = next(i for i, (where, text) in memory.items() if where == "group" and "Lisbon" in text)
        corpus = {i: text for i, (_, text) in memory.items()}

        print(f"\n== recall for Bob ({conversation}): {query!r}, top {K}")
        print("-- arm 1: MCP server (earshot mcp, tool recall, BM25)")
        ungated_bm25 = unscoped_top_k(corpus, query, K)
        show("without the gate (unscoped BM25 over every item)", ungated_bm25, memory, forbidden)
        mcp_items = anyio.run(recall_through_mcp, binary, serve, bob, query)
        mcp_ids = [i["item"] for i in mcp_items]
        show("with the gate (earshot mcp recall)", mcp_ids, memory, forbidden)
        for i in mcp_items:
            print(f"      {i['item'][:8]}: {i['reason']}, basis {i['basis']}, role {i['role']}")

        print("-- arm 2: LangChain retriever (EarshotRetriever, hybrid)")
        vectors = InMemoryVectorStore(HashedBow())
        vectors.add_documents([Document(id=i, page_content=t) for i, t in corpus.items()])
        ungated_dense = [str(d.id) for d in vectors.similarity_search(query, k=K)]
        show("without the gate (InMemoryVectorStore over every item)", ungated_dense, memory, forbidden)
        retriever = EarshotRetriever(
            client=client, store=STORE, container=bob, ranking="hybrid", embed=hashed_bow_embedding, k=K
        )
        docs = retriever.invoke(query)
        lc_ids = [d.metadata["item"] for d in docs]
        show("with the gate (EarshotRetriever)", lc_ids, memory, forbidden)
        for d in docs:
            meta = d.metadata
            print(f"      {meta['item'][:8]}: {meta['reason']}, basis {meta['basis']}, role {meta['role']}")

        print(f"\n  bob <- {model.answer(query, [d.page_content for d in docs])}")

        for arm, ids in (("mcp", mcp_ids), ("langchain", lc_ids)):
            if set(ids) & forbidden:
                failures.append(f"{arm}: the gated context holds a forbidden item: {sorted(set(ids) & forbidden)}")
            if entitled not in ids:
                failures.append(f"{arm}: the gated context misses the entitled item {entitled}")
        demonstrated = bool(set(ungated_bm25) & forbidden) and bool(set(ungated_dense) & forbidden)

    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1
    if not demonstrated:
        print("\nthe ungated arms no longer show the leak: the example demonstrates nothing", file=sys.stderr)
        return 2
    print("\nok: without the gate both arms would have shown Alice's private message to Bob; with it, neither did,")
    print("and both kept the group's Lisbon fact.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
