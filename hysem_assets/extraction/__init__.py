"""Structured fields from parsed documents: chunking, prompts, incremental extraction, merging, the embedded extractor."""
