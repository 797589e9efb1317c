"""earshot_agents: Earshot in your agent. Retrievers for LangChain (`earshot_agents.langchain`)
and LlamaIndex (`earshot_agents.llamaindex`) over Earshot's context assembly, a LangChain
`remember` tool, and the small HTTP client they share (`earshot_agents.client`). The framework
modules import their framework; this one imports neither. Guide: docs/agents.md.
"""

from earshot_agents.client import (
    Container,
    Context,
    ContextItem,
    EarshotAPIError,
    EarshotHTTP,
)
from earshot_agents.embeddings import EmbeddingFn, hashed_bow_embedding

__all__ = [
    "Container",
    "Context",
    "ContextItem",
    "EarshotAPIError",
    "EarshotHTTP",
    "EmbeddingFn",
    "hashed_bow_embedding",
]
