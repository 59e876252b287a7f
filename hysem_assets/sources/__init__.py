"""Clients and parsers for the scholarly metadata APIs."""
