"""deep_merge: maps merge key by key, anything else is replaced, inputs stay untouched."""

import copy

from hypothesis import given
from hypothesis import strategies as st

from app.config.merge import deep_merge

leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3), st.lists(st.integers(), max_size=2))
trees = st.recursive(leaves, lambda children: st.dictionaries(st.sampled_from("abc"), children, max_size=3), max_leaves=8)
layers = st.dictionaries(st.sampled_from("abc"), trees, max_size=3)


@given(layers, layers)
def test_the_override_wins_everywhere_it_speaks_and_inputs_are_untouched(base: dict, override: dict) -> None:
    base_before, override_before = copy.deepcopy(base), copy.deepcopy(override)

    merged = deep_merge(base, override)

    assert (base, override) == (base_before, override_before)
    assert set(merged) == set(base) | set(override)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            assert merged[key] == deep_merge(base[key], value)
        else:
            assert merged[key] == value
    for key in set(base) - set(override):
        assert merged[key] == base[key]


@given(layers)
def test_merging_onto_nothing_or_with_nothing_changes_nothing(layer: dict) -> None:
    assert deep_merge({}, layer) == layer == deep_merge(layer, {})
