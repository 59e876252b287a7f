"""Chunking, embeddings, the chunk index (dense and BM25 in Qdrant), search and BEIR evaluation."""
