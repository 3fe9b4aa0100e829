"""The on-disk cache of compiled kernels.

Entries live in cuda.core's `FileStreamProgramCache` (atomic writes through
`os.replace`, so a concurrent process sees the old entry or the new one,
never half of one) under `MOLTEN_CACHE_DIR` (default: `molten` in the
user's cache directory); `MOLTEN_DISABLE_CACHE=1` (or true, yes, on) turns
it off. cuda.core stores the bytes as given and does not check them, so
each entry here is framed with a magic line and the SHA-256 of the cubin: an
entry that was truncated or overwritten on disk is detected, dropped and
rebuilt.

The cache never fails a call: a directory that cannot be made, read or
written (a file in its place, no permission, a full disk, an entry that is
a directory) gives one `CacheWarning` naming it, and the kernels are
compiled in memory as if the cache were off.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MAGIC = b"molten-cubin-1\n"
_DIGEST_SIZE = 32
log = logging.getLogger("molten.runtime")


_FALSY = ("", "0", "false", "no", "off")
_TRUTHY = ("1", "true", "yes", "on")


class CacheWarning(UserWarning):
    """The kernel cache could not be used; the call compiled in memory."""


def cache_enabled() -> bool:
    """False when `MOLTEN_DISABLE_CACHE` is set to a true value (1, true,
    yes, on; any case). A value that is neither true nor false warns and
    disables the cache, as whoever set it most likely meant."""
    value = os.environ.get("MOLTEN_DISABLE_CACHE", "").strip().lower()
    if value in _FALSY:
        return True
    if value not in _TRUTHY:
        warnings.warn(
            f"MOLTEN_DISABLE_CACHE={value!r} is neither true ({', '.join(_TRUTHY)}) "
            f"nor false ({', '.join(repr(v) for v in _FALSY)}); the cache is off",
            CacheWarning,
            stacklevel=2,
        )
    return False


_warned: set[tuple[str, str]] = set()


def _unusable(directory: Path, doing: str, error: BaseException) -> None:
    """Warns once per directory and kind of failure."""
    key = (str(directory), doing)
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn(
        f"molten: the kernel cache in {directory} could not {doing} "
        f"({type(error).__name__}: {error}); compiling in memory instead "
        "(set MOLTEN_CACHE_DIR to a writable directory, or MOLTEN_DISABLE_CACHE=1)",
        CacheWarning,
        stacklevel=3,
    )


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
    """Compiled cubins by key, checked on every read; every failure of the
    file system is a miss (or a write skipped) and one `CacheWarning`."""

    def __init__(self, directory: Path | None = None):
        from cuda.core.utils import FileStreamProgramCache

        self.directory = directory or cache_dir()
        # A directory that cannot be made leaves an in-memory store, which
        # lives as long as this object: one compile.
        self._store: Any = {}
        with self._tolerating("be created"):
            self._store = FileStreamProgramCache(self.directory / "programs")

    @contextlib.contextmanager
    def _tolerating(self, doing: str) -> Iterator[None]:
        try:
            yield
        except OSError as error:
            _unusable(self.directory, doing, error)

    def get(self, key: bytes) -> bytes | None:
        entry = None
        with self._tolerating("be read"):
            entry = self._store.get(key)
        if entry is None:
            return None
        payload = unframe(entry)
        if payload is None:
            log.warning("molten: dropping a damaged cache entry in %s", self.directory)
            self.discard(key)
        return payload

    def put(self, key: bytes, payload: bytes) -> None:
        with self._tolerating("be written"):
            self._store[key] = frame(payload)

    def discard(self, key: bytes) -> None:
        with self._tolerating("drop a damaged entry"), contextlib.suppress(KeyError):
            del self._store[key]
