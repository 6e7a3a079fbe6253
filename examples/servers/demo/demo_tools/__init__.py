"""Stdlib-only demo tools for the Stoa demo executor (one module per tool)."""
