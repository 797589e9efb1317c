"""earshot_agents against the real `earshot serve` and the real langchain-core and
llama-index-core. The store (Figure 1 grown a little): the group fact f1 (owner, alice, bob), the
public p1, and Alice's private f2 and d1–d4, written so that f2 is the BEST lexical AND dense match
of Bob's question and d1–d4 beat f1 too. For Bob's one-to-one:

- an LCEL chain (retriever | format_docs, RunnablePassthrough, a prompt, FakeListLLM) and a
  LlamaIndex RetrieverQueryEngine (MockLLM) see f1 and p1, never f2 or d1–d4, under bm25, dense
  and hybrid, sync and async;
- the naive approach (an unscoped top-k from LangChain's InMemoryVectorStore, or unscoped BM25,
  then Earshot's decisions as a post-filter) would have put forbidden items in the context
  without the filter, and with it loses f1, which the gate returns;
- an unresolved container gets public items only, says so in metadata and logs a warning;
- errors raise EarshotAPIError with the API's code; the remember tool binds the audience.
Run with clients/agents/test.sh.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import re
import unittest
from pathlib import Path

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.language_models.fake import FakeListLLM
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import PromptTemplate
from langchain_core.runnables import RunnableParallel, RunnablePassthrough
from langchain_core.tools import ToolException
from langchain_core.vectorstores import InMemoryVectorStore
from llama_index.core import Settings
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import QueryBundle

from earshot_agents import Container, EarshotAPIError, EarshotHTTP, hashed_bow_embedding
from earshot_agents.langchain import EarshotRememberTool, EarshotRetriever
from earshot_agents.llamaindex import EarshotLlamaRetriever
from earshot_agents.naive import post_filter, unscoped_top_k
from earshot_agents.testing import Serve

STORE = "agents"
QUESTION = "where did the team offsite move"
BOB = Container(owner="owner", participants=["bob"])
BOB_BY_EMAIL = Container(owner="owner", identities=[("email", "bob@example.com")])
ALICE = Container(owner="owner", participants=["alice"])
GROUP = ["alice", "bob"]
ITEMS: dict[str, tuple[object, str]] = {
    "f1": (GROUP, "The team offsite moved to Lisbon."),
    "p1": ("public", "The office opens at nine."),
    "n1": ("owner_private", "My own budget note."),
    # Alice, privately: the best lexical and dense match of the question, and four more above f1.
    "f2": (
        ["alice"],
        "Where did the team offsite move? Alice says the team offsite move does not matter: she is interviewing elsewhere.",
    ),
    "d1": (["alice"], "Alice asked where the team offsite went."),
    "d2": (["alice"], "Alice: did the offsite move again?"),
    "d3": (["alice"], "Alice wonders where the offsite is, for the team."),
    "d4": (["alice"], "Alice asks whether the team offsite did move."),
}
FORBIDDEN_FOR_BOB = {"f2", "d1", "d2", "d3", "d4", "n1"}
CONTENT = {i: text for i, (_, text) in ITEMS.items()}
RANKINGS = ("bm25", "dense", "hybrid")


class HashedBow(Embeddings):
    """LangChain Embeddings over the model-free hashed bag of words (not a language model)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [hashed_bow_embedding(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return hashed_bow_embedding(text)


def format_docs(docs: list[Document]) -> str:
    return "\n\n".join(f"[{d.metadata['item']}] {d.page_content}" for d in docs)


class AgentsTest(unittest.TestCase):
    serve: Serve
    client: EarshotHTTP

    @classmethod
    def setUpClass(cls) -> None:
        try:
            cls.serve = Serve()
        except FileNotFoundError as e:
            raise unittest.SkipTest(str(e)) from e
        cls.addClassCleanup(cls.serve.stop)
        cls.client = EarshotHTTP(cls.serve.base_url, token=cls.serve.token)
        cls.addClassCleanup(cls.client.close)
        c = cls.client
        c.create_store(STORE)
        for p in ("owner", "alice", "bob", "carol"):
            c.add_participant(STORE, p)
        c.bind_identity(STORE, "email", "bob@example.com", "bob")
        for item, (origin, text) in ITEMS.items():
            how = {"visibility": origin} if isinstance(origin, str) else {"participants": origin}
            c.remember(STORE, id=item, owner="owner", content=text, embedding=hashed_bow_embedding(text), **how)
        # No tokenizer download (tiktoken) for the query engine's prompt sizing: words are enough here.
        Settings.tokenizer = lambda text: text.split()

    def retriever(self, ranking: str = "hybrid", container: Container = BOB, k: int = 3) -> EarshotRetriever:
        embed = None if ranking == "bm25" else hashed_bow_embedding
        return EarshotRetriever(client=self.client, store=STORE, container=container, ranking=ranking, embed=embed, k=k)

    # -- the premise ----------------------------------------------------------------------------

    def test_premise_the_forbidden_item_is_the_best_match(self) -> None:
        """f2 is the best lexical and the best dense match over the whole store (an unscoped
        ranking), and Earshot's own ranker agrees for a container that may see it (Alice's)."""
        self.assertEqual(unscoped_top_k(CONTENT, QUESTION, 1), ["f2"])
        self.assertEqual(unscoped_top_k(CONTENT, QUESTION, 1, embed=hashed_bow_embedding), ["f2"])
        for ranking in ("bm25", "dense"):
            docs = self.retriever(ranking, container=ALICE, k=1).invoke(QUESTION)
            self.assertEqual([d.metadata["item"] for d in docs], ["f2"], ranking)
        # ... and f1 is below all of d1-d4 in both unscoped orders.
        for embed in (None, hashed_bow_embedding):
            order = unscoped_top_k(CONTENT, QUESTION, len(CONTENT), embed=embed)
            self.assertGreater(order.index("f1"), max(order.index(d) for d in ("d1", "d2", "d3", "d4")), order)

    # -- LangChain --------------------------------------------------------------------------------

    def test_lcel_chain_sees_only_admissible_documents(self) -> None:
        prompt = PromptTemplate.from_template(
            "Answer from the context only.\n\nContext:\n{context}\n\nQuestion: {question}"
        )
        llm = FakeListLLM(responses=["The offsite moved to Lisbon."] * 3)  # a stub, not a model
        for ranking in RANKINGS:
            with self.subTest(ranking=ranking):
                retriever = self.retriever(ranking)
                chain = RunnableParallel(context=retriever | format_docs, question=RunnablePassthrough()).assign(
                    answer=prompt | llm | StrOutputParser()
                )
                out = chain.invoke(QUESTION)
                self.assertIn("[f1] The team offsite moved to Lisbon.", out["context"])
                for item in FORBIDDEN_FOR_BOB:
                    self.assertNotIn(f"[{item}]", out["context"])
                self.assertNotIn("interviewing", out["context"])
                self.assertEqual(out["answer"], "The offsite moved to Lisbon.")
                docs = retriever.invoke(QUESTION)
                self.assertEqual(docs[0].metadata["item"], "f1")
                self.assertEqual({d.metadata["item"] for d in docs}, {"f1", "p1"})
                f1 = docs[0]
                self.assertEqual(
                    (f1.id, f1.metadata["reason"], f1.metadata["basis"]), ("f1", "admitted_origin", "origin")
                )
                self.assertIn(f1.metadata["role"], ("instruction", "data"))
                self.assertEqual((f1.metadata["ranking"], f1.metadata["resolved"]), (ranking, True))
                self.assertTrue(f1.metadata["attempt"])
                p1 = next(d for d in docs if d.metadata["item"] == "p1")
                self.assertEqual(p1.metadata["reason"], "admitted_public")

    def test_langchain_async(self) -> None:
        async def run() -> list[list[Document]]:
            return await asyncio.gather(
                *(self.retriever(r, container=BOB_BY_EMAIL).ainvoke(QUESTION) for r in RANKINGS)
            )

        for ranking, docs in zip(RANKINGS, asyncio.run(run())):
            self.assertEqual(docs[0].metadata["item"], "f1", ranking)
            self.assertEqual({d.metadata["item"] for d in docs}, {"f1", "p1"}, ranking)

    def test_post_filter_leaks_or_loses_what_the_gate_keeps(self) -> None:
        """The naive approach: top-k over everything (LangChain's InMemoryVectorStore, or BM25),
        then Earshot's decisions as a post-filter. Unfiltered, the context holds forbidden items;
        filtered, f1 is gone (its slot was taken). The gate returns f1 first."""
        k = 3
        vectors = InMemoryVectorStore(HashedBow())
        vectors.add_documents([Document(id=i, page_content=t) for i, t in CONTENT.items()])
        dense_top = [d.id for d in vectors.similarity_search(QUESTION, k=k)]
        bm25_top = unscoped_top_k(CONTENT, QUESTION, k)
        for name, top, ranking in (("dense", dense_top, "dense"), ("bm25", bm25_top, "bm25")):
            with self.subTest(naive=name):
                self.assertIn("f2", top)  # without the filter: the forbidden best match is in the context
                self.assertTrue(set(top) <= FORBIDDEN_FOR_BOB, top)
                filtered = post_filter(self.client, STORE, BOB, top)
                self.assertNotIn("f1", filtered)  # with it: the entitled item is lost at top-k
                self.assertEqual(filtered, [])
                gated = [d.metadata["item"] for d in self.retriever(ranking, k=k).invoke(QUESTION)]
                self.assertEqual(gated[0], "f1")
                self.assertFalse(set(gated) & FORBIDDEN_FOR_BOB)

    def test_unresolved_container_is_public_only_and_says_so(self) -> None:
        stranger = Container(owner="owner", participants=["bob"], identities=[("sms", "+15550000000")])
        with self.assertLogs("earshot_agents", level="WARNING") as logs:
            docs = self.retriever("hybrid", container=stranger).invoke(QUESTION)
        self.assertEqual([d.metadata["item"] for d in docs], ["p1"])
        self.assertEqual(
            (docs[0].metadata["resolved"], docs[0].metadata["unresolved_reason"]), (False, "unknown_identity")
        )
        self.assertIn("unresolved", logs.output[0])
        stale = Container(owner="owner", participants=["bob"], quality="stale")
        with self.assertLogs("earshot_agents", level="WARNING"):
            nodes = EarshotLlamaRetriever(self.client, STORE, stale).retrieve(QUESTION)
        self.assertEqual([n.node.node_id for n in nodes], ["p1"])
        self.assertEqual(nodes[0].node.metadata["unresolved_reason"], "evidence_quality")

    def test_errors_carry_the_api_code(self) -> None:
        with self.assertRaises(EarshotAPIError) as e:
            EarshotRetriever(client=self.client, store="nope", container=BOB).invoke(QUESTION)
        self.assertEqual((e.exception.code, e.exception.status), ("store_not_found", 404))
        with self.assertRaises(EarshotAPIError) as e:
            EarshotRetriever(
                client=self.client, store=STORE, container=BOB, ranking="dense", embed=lambda t: [1.0, 0.0]
            ).invoke(QUESTION)
        self.assertEqual(e.exception.code, "embedding_dimension_mismatch")
        with EarshotHTTP(self.serve.base_url) as anonymous:  # no token
            with self.assertRaises(EarshotAPIError) as e:
                asyncio.run(anonymous.aassemble_context(STORE, BOB, QUESTION))
            self.assertEqual(e.exception.code, "unauthenticated")
        with EarshotHTTP("http://127.0.0.1:9") as nowhere:
            with self.assertRaises(EarshotAPIError) as e:
                nowhere.assemble_context(STORE, BOB, QUESTION)
            self.assertEqual(e.exception.code, "unavailable")
        with self.assertRaises(ValueError):  # dense needs an embedding function
            EarshotRetriever(client=self.client, store=STORE, container=BOB, ranking="dense")

    def test_remember_tool_binds_the_audience(self) -> None:
        # Bound to Bob's one-to-one: the model gives the content only; Bob sees it, Alice does not.
        tool = EarshotRememberTool(
            client=self.client, store=STORE, owner="owner", present=BOB, embed=hashed_bow_embedding
        )
        self.assertEqual(set(tool.args), {"content"})
        said = tool.invoke({"content": "Bob's flight to the Lisbon offsite lands at noon."})
        self.assertEqual(said["outcome"], "created")
        bob = {d.metadata["item"] for d in self.retriever("bm25", k=10).invoke("flight lands noon")}
        alice = {d.metadata["item"] for d in self.retriever("bm25", container=ALICE, k=10).invoke("flight lands noon")}
        self.assertIn(said["item"], bob)
        self.assertNotIn(said["item"], alice)
        # Unbound: the model says who was present; an unknown participant refuses the write.
        free = EarshotRememberTool(client=self.client, store=STORE, owner="owner")
        self.assertEqual(set(free.args), {"content", "participants", "visibility"})
        with self.assertRaises(ToolException) as e:
            free.invoke({"content": "x", "participants": ["mallory"]})
        assert isinstance(e.exception.__cause__, EarshotAPIError)
        self.assertEqual(e.exception.__cause__.code, "origin_unresolved")
        with self.assertRaises(ToolException):  # neither who was present nor a visibility
            free.invoke({"content": "who was there?"})
        out = asyncio.run(free.ainvoke({"content": "Carol joins the offsite.", "participants": ["carol"]}))
        self.assertEqual(out["outcome"], "created")

    # -- the guide ----------------------------------------------------------------------------------

    def test_guide_snippets_run_as_written(self) -> None:
        """docs/agents.md's python blocks, in order, in one namespace, against this service (its
        address substituted) with the store `demo` they assume."""
        guide = (Path(__file__).resolve().parents[3] / "docs" / "agents.md").read_text()
        blocks = re.findall(r"^```python\n(.*?)^```", guide, flags=re.S | re.M)
        self.assertGreaterEqual(len(blocks), 3)
        self.client.create_store("demo")
        for p in ("owner", "alice", "bob"):
            self.client.add_participant("demo", p)
        os.environ["EARSHOT_TOKEN"] = self.serve.token
        namespace: dict[str, object] = {}
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                for block in blocks:
                    code = block.replace("http://127.0.0.1:7878", self.serve.base_url)
                    exec(compile(code, "docs/agents.md", "exec"), namespace)
        finally:
            earshot = namespace.get("earshot")
            if isinstance(earshot, EarshotHTTP):
                earshot.close()
        docs = namespace["docs"]
        assert isinstance(docs, list)
        self.assertEqual(docs[0].page_content, "The team offsite moved to Lisbon.")
        self.assertNotIn("interviewing", out.getvalue())
        self.assertIn("It moved to Lisbon.", out.getvalue())
        response = namespace["response"]
        texts = [n.node.get_content() for n in response.source_nodes]  # type: ignore[attr-defined]
        self.assertEqual(texts, ["The team offsite moved to Lisbon."])

    # -- LlamaIndex -------------------------------------------------------------------------------

    def test_llamaindex_query_engine_sees_only_admissible_nodes(self) -> None:
        for ranking in RANKINGS:
            with self.subTest(ranking=ranking):
                embed = None if ranking == "bm25" else hashed_bow_embedding
                retriever = EarshotLlamaRetriever(self.client, STORE, BOB, ranking=ranking, embed=embed, k=3)
                engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())  # MockLLM: echoes, not a model
                response = engine.query(QUESTION)
                ids = [n.node.node_id for n in response.source_nodes]
                self.assertEqual(ids[0], "f1")
                self.assertEqual(set(ids), {"f1", "p1"})
                self.assertNotIn("interviewing", str(response))
                self.assertIn("Lisbon", str(response))  # MockLLM echoes the prompt: the context is in it
                meta = response.source_nodes[0].node.metadata
                self.assertEqual((meta["item"], meta["reason"], meta["basis"]), ("f1", "admitted_origin", "origin"))
                self.assertIn(meta["role"], ("instruction", "data"))

    def test_llamaindex_async_and_query_bundle_embedding(self) -> None:
        retriever = EarshotLlamaRetriever(self.client, STORE, BOB, ranking="dense", k=3)  # no embed function
        bundle = QueryBundle(QUESTION, embedding=hashed_bow_embedding(QUESTION))
        nodes = asyncio.run(retriever.aretrieve(bundle))
        self.assertEqual([n.node.node_id for n in nodes][0], "f1")
        self.assertFalse({n.node.node_id for n in nodes} & FORBIDDEN_FOR_BOB)
        with self.assertRaises(ValueError):
            retriever.retrieve(QUESTION)  # a plain string has no embedding, and there is no embed function


if __name__ == "__main__":
    unittest.main()
