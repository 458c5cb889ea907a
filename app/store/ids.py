"""Record ids and timestamps.

Ids are UUIDv7 strings (RFC 9562: a 48-bit millisecond timestamp first, then random
bits), so they sort by creation time as plain text, across processes, without
coordination. Two ids made in the same millisecond sort randomly; queries that need
exact insertion order break ties on rowid.
"""

import os
import time

_VERSION_7 = 0x7 << 76
_VARIANT_RFC = 0b10 << 62
_LOW_62_BITS = (1 << 62) - 1


def now_ms() -> int:
    """Milliseconds since the Unix epoch: the unit of every *_at column."""
    return time.time_ns() // 1_000_000


def new_id(at_ms: int | None = None) -> str:
    """A fresh id made at ``at_ms`` (milliseconds since the epoch; now when None)."""
    random_bits = int.from_bytes(os.urandom(10), "big") >> 6  # the 74 random bits v7 holds
    value = (
        (now_ms() if at_ms is None else at_ms) << 80
        | _VERSION_7
        | (random_bits >> 62) << 64  # 12 bits between the version and the variant
        | _VARIANT_RFC
        | random_bits & _LOW_62_BITS
    )
    digits = f"{value:032x}"
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"
