"""Graph stores (Neo4j, embedded ladybug) and the chunk vector store (Qdrant)."""
