"""Chunking, embeddings, dense and keyword indexes, fused search and BEIR evaluation."""
