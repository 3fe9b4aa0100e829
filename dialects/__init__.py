"""Molten's dialects, one per module: `molten` (tensor math)."""
