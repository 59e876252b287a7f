"""Polite, resilient HTTP shared by the metadata sources, full-text downloads and OpenAI-compatible model servers."""
