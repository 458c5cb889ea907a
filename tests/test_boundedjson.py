"""app.core.boundedjson: the stdlib's answer within the limits, one named error beyond them."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.boundedjson import JsonLimitError, loads

LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-(10**18), 10**18), st.text(alphabet='a"\\[]{}:,é\n', max_size=5))
VALUES = st.recursive(
    LEAVES, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
)


def depth(value: object) -> int:
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    return 0


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(VALUES, st.integers(1, 6), st.booleans())
def test_within_the_limits_it_is_json_loads_and_beyond_them_a_named_error(value, limit: int, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, indent=1)
    if depth(value) > limit:
        with pytest.raises(JsonLimitError, match=f"^JSON nested deeper than {limit} levels$"):
            loads(text, max_depth=limit)
    else:
        assert loads(text, max_depth=limit) == value


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("[" * 100_000 + "]" * 100_000, "JSON nested deeper than 64 levels", 1),
        ('{\n"a": 1,\n"b": {"a": 2},\n"a": 3}', 'the key "a" appears twice in one object', 4),
        ('{"\\u0061": 1, "a": 2}', 'the key "a" appears twice in one object', 1),
        ('{"n": ' + "9" * 5_000 + "}", "an integer of 5,000 digits is longer than 20", 0),
        ('"' + "x" * (10 * 1024 * 1024) + '"', "JSON of 10,485,762 characters is over the limit of 10,485,760 (10 MB)", 0),
    ],
    ids=["deep", "repeated key", "repeated key, escaped", "long integer", "too large"],
)
def test_each_limit_is_named_with_its_line(text: str, message: str, line: int) -> None:
    with pytest.raises(JsonLimitError) as refused:
        loads(text, unique_keys=True)
    assert (str(refused.value), refused.value.lineno) == (message, line)


def test_repeated_keys_pass_unless_asked_about_as_json_loads_has_them() -> None:
    assert loads('{"a": 1, "a": 2}') == {"a": 2}


@pytest.mark.parametrize("text", ["\ufeff{}", "{", "[1,]", "", "{'a': 1}"], ids=["BOM", "open", "comma", "empty", "quotes"])
def test_text_that_is_not_json_is_refused_in_json_loads_own_words(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as refused:
        loads(text)
    assert str(refused.value) == str(expected.value)
