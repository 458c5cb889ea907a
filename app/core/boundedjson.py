"""JSON from sources we do not control (config files, OPENCODE_* values, a model's tool
arguments), parsed within limits: a size, a nesting depth and an integer length, and,
where asked, no key twice in one object.

The stdlib parser recurses once per level (100,000 levels end in RecursionError), turns
a 5,000-digit integer into a ValueError of its own, and keeps the last of two equal keys
silently. A linear scan over the strings and brackets finds depth and duplicate keys
first, without recursion; the stdlib parser then does the parsing, with an integer hook.
"""

from __future__ import annotations

import functools
import itertools
import json
import operator
import re
from typing import Any

MAX_BYTES = 10 * 1024 * 1024
MAX_DEPTH = 64
MAX_INT_DIGITS = 20
"""Enough for any 64-bit integer; a longer one is no count, size or time we take."""

_TOKENS = re.compile(r'("[^"\\]*(?:\\.[^"\\]*)*")(\s*:)?|[\[\]{}]')
"""A string (with the colon that makes it a key) or a bracket: all the scan needs."""
_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_STEP_OF = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")


class JsonLimitError(ValueError):
    """The text breaks a limit (or repeats a key); ``str`` says which, ``lineno`` where
    (0 when the whole text is at fault)."""

    def __init__(self, message: str, lineno: int = 0) -> None:
        super().__init__(message)
        self.lineno = lineno


class RepeatedKeyError(JsonLimitError):
    """One object holds a key twice (when ``unique_keys`` is asked)."""


def loads(
    text: str,
    *,
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_DEPTH,
    max_int_digits: int = MAX_INT_DIGITS,
    unique_keys: bool = False,
) -> Any:
    """``json.loads(text)`` within the limits. Raises JsonLimitError for a broken limit or
    a repeated key, json.JSONDecodeError for text that is not JSON."""
    if len(text) > max_bytes:
        raise JsonLimitError(
            f"JSON of {len(text):,} characters is over the limit of {max_bytes:,} ({max_bytes / 2**20:g} MB)"
        )
    if unique_keys or (_openings(text) > max_depth and _deepest(text) > max_depth):
        _scan(text, max_depth, unique_keys)  # names the line of the bracket too deep, or of a repeated key
    if text.startswith("\ufeff"):  # as json.loads has it: the decoder alone would say "Expecting value"
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return _decoder(max_int_digits).decode(text)


def _openings(text: str) -> int:
    """How many opening brackets the text holds, in strings or not: no deeper nesting is
    possible, and counting is far cheaper than ``_deepest`` (tool arguments are parsed
    again at every step of a turn, as the history is sent back)."""
    return text.count("{") + text.count("[")


def _deepest(text: str) -> int:
    """How deep the brackets outside strings nest, without a Python step per bracket:
    the strings are cut out, every byte but a bracket deleted, each opening bracket made
    a 2 and each closing one a 0; less 1 per position, the largest running sum is the
    depth. On 10 MB of `[]` that is less than the parse itself, where ``_scan`` takes
    several times it."""
    outside = _STRINGS.sub("", text).encode("utf-8", "surrogatepass")
    steps = outside.translate(_STEP_OF, _NOT_BRACKETS)
    if not steps:
        return 0
    depth: int = max(map(operator.sub, itertools.accumulate(steps), range(1, len(steps) + 1)))
    return depth


def _scan(text: str, max_depth: int, unique_keys: bool) -> None:
    """Depth and repeated keys, in one pass over the strings and brackets. Brackets only
    count outside strings; mismatched ones are left for the parser to report."""
    open_objects: list[set[str] | None] = []  # one entry per open bracket: an object's keys, None for an array
    for token in _TOKENS.finditer(text):
        bracket = token.group()
        if bracket in "{[":
            if len(open_objects) == max_depth:
                raise JsonLimitError(
                    f"JSON nested deeper than {max_depth} levels", _line(text, token.start())
                )
            open_objects.append(set() if bracket == "{" else None)
        elif bracket in "}]":
            if open_objects:
                open_objects.pop()
        elif unique_keys and token.group(2) and open_objects and open_objects[-1] is not None:
            keys = open_objects[-1]
            try:
                key = json.loads(token.group(1))
            except json.JSONDecodeError:
                continue  # a bad escape: the parser reports it
            if key in keys:
                raise RepeatedKeyError(f'the key "{key}" appears twice in one object', _line(text, token.start()))
            keys.add(key)


@functools.lru_cache(maxsize=8)
def _decoder(max_digits: int) -> json.JSONDecoder:
    """The stdlib decoder with an integer hook, made once per limit (``json.loads`` with a
    hook builds a new decoder and scanner at every call)."""

    def parse_int(digits: str) -> int:
        if len(digits.lstrip("-")) > max_digits:
            raise JsonLimitError(f"an integer of {len(digits.lstrip('-')):,} digits is longer than {max_digits}")
        return int(digits)

    return json.JSONDecoder(parse_int=parse_int)


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1

