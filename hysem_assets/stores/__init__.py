"""Graph stores (Neo4j, embedded ladybug) and the chunk store (Qdrant Edge, or a Qdrant server)."""
