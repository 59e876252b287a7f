"""Where assets live: graph stores (embedded ladybug, Neo4j) and their schema, chunk stores (Qdrant Edge,
a Qdrant server), store locks, asset tables and the work cache."""
