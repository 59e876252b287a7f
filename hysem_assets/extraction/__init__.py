"""Structured fields from parsed documents: definitions, chunking, incremental extraction, merging."""
