"""The knowledge graph as data: partition graph building, mentions, saved reports, the summary tree."""
