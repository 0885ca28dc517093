"""BLAKE2b for feature hashing, id sampling and cache file names, without ``hashlib``.

``hashlib`` loads OpenSSL when it is imported (a few milliseconds), which a hook process pays on
every prompt; BLAKE2b itself is built into CPython as ``_blake2``, the module ``hashlib`` takes
it from. The digests are the same either way.
"""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

__all__ = ["blake2b"]
