"""A tiny shop."""
