"""Typographic punctuation and spaces as their plain ASCII counterparts.

Models often write a straight quote where a file has a curly one (or a hyphen for an
en dash, a space for a no-break space); matching compares lines with these made plain.
"""

from __future__ import annotations

import unicodedata

_PLAIN = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys(
            "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "
        ),
    }
)


def plain_punctuation(text: str) -> str:
    """`text` with dashes, quotes and spaces of every kind as "-", "'", '"' and " ",
    one character for one (so offsets still line up)."""
    return text.translate(_PLAIN)


def plain_line(line: str) -> str:
    """A line as loose matching compares it: composed characters (NFC), typographic
    punctuation made plain, runs of whitespace as one space, ends trimmed."""
    return plain_punctuation(" ".join(unicodedata.normalize("NFC", line).split()))
