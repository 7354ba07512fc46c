import hashlib
import json

from hypothesis import given
from hypothesis import strategies as st

from studio.core.json.pieces import dumps_in_pieces, sha256_sorted_json
from tests.support.json_strategies import json_scalars

values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=6), children, max_size=5)
    ),
    max_leaves=60,
)


def one_call(value, **options):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, **options)


@given(values, st.integers(0, 5))
def test_pieces_make_the_same_text_as_one_call(value, depth):
    assert dumps_in_pieces(value, depth=depth) == one_call(value)
    assert dumps_in_pieces(value, depth=depth, sort_keys=True) == one_call(value, sort_keys=True)


@given(values)
def test_the_hash_in_pieces_is_the_hash_of_the_sorted_text(value):
    text = one_call(value, sort_keys=True).encode("utf-8", "surrogatepass")
    assert sha256_sorted_json(value) == hashlib.sha256(text).hexdigest()


def test_a_custom_leaf_writer_is_used_for_every_member():
    assert dumps_in_pieces({"a": [1, 2], "b": 3}, leaf=lambda v: "X") == '{"a":[X,X],"b":X}'
