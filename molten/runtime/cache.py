"""The on-disk cache of compiled kernels.

Entries live in cuda.core's `FileStreamProgramCache` (atomic writes through
`os.replace`, so a concurrent process sees the old entry or the new one,
never half of one) under `MOLTEN_CACHE_DIR` (default: `molten` in the
user's cache directory); `MOLTEN_DISABLE_CACHE=1` turns it off. cuda.core
stores the bytes as given and does not check them, so each entry here is
framed with a magic line and the SHA-256 of the cubin: an entry that was
truncated or overwritten on disk is detected, dropped and rebuilt.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from pathlib import Path
from typing import Any

MAGIC = b"molten-cubin-1\n"
_DIGEST_SIZE = 32
log = logging.getLogger("molten.runtime")


def cache_enabled() -> bool:
    return os.environ.get("MOLTEN_DISABLE_CACHE", "").strip() in ("", "0")


def cache_dir() -> Path:
    """`MOLTEN_CACHE_DIR`, else `$XDG_CACHE_HOME/molten` (`~/.cache/molten`)."""
    configured = os.environ.get("MOLTEN_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "molten"


def frame(payload: bytes) -> bytes:
    return MAGIC + hashlib.sha256(payload).digest() + payload


def unframe(entry: bytes) -> bytes | None:
    """The payload of a framed entry, or None when the entry is damaged."""
    if not entry.startswith(MAGIC):
        return None
    digest = entry[len(MAGIC) : len(MAGIC) + _DIGEST_SIZE]
    payload = entry[len(MAGIC) + _DIGEST_SIZE :]
    return payload if hashlib.sha256(payload).digest() == digest else None


class ProgramCache:
    """Compiled cubins by key, checked on every read."""

    def __init__(self, directory: Path | None = None):
        from cuda.core.utils import FileStreamProgramCache

        self.directory = directory or cache_dir()
        self._store: Any = FileStreamProgramCache(self.directory / "programs")

    def get(self, key: bytes) -> bytes | None:
        entry = self._store.get(key)
        if entry is None:
            return None
        payload = unframe(entry)
        if payload is None:
            log.warning("molten: dropping a damaged cache entry in %s", self.directory)
            self.discard(key)
        return payload

    def put(self, key: bytes, payload: bytes) -> None:
        self._store[key] = frame(payload)

    def discard(self, key: bytes) -> None:
        with contextlib.suppress(KeyError):
            del self._store[key]
