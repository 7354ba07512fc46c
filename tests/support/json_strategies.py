"""Hypothesis strategies for JSON values and for the Python values a hostile hook can return."""

from __future__ import annotations

from hypothesis import strategies as st

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)

json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5)
    ),
    max_leaves=40,
)

python_values = st.recursive(
    json_scalars | st.sampled_from([float("nan"), float("inf"), -float("inf"), b"x", object()]),
    lambda children: (
        st.lists(children, max_size=4)
        | st.tuples(children, children)
        | st.frozensets(st.integers(), max_size=3)
        | st.dictionaries(st.text(max_size=5) | st.integers(), children, max_size=4)
    ),
    max_leaves=30,
)
