"""The shared HTTP client."""
