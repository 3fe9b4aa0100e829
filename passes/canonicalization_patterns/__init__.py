"""Canonicalization patterns, attached to ops through traits (as in xDSL)."""
