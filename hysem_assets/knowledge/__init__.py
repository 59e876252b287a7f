"""The knowledge graph as data: schema, partition graph building, mentions, saved reports."""
