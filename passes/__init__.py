"""Molten's passes, one `ModulePass` per module."""
