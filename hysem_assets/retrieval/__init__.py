"""Chunking, the chunk index (dense and BM25 in Qdrant), search, repair and BEIR evaluation."""
