"""spec/adf.md §7 "Key order": where the runtime names the first unsupported key, JavaScript
lists integer-like keys ("0" up to 2^32 − 2) first in numeric order, then the rest as inserted."""

from __future__ import annotations

import pytest

from studio.core.findings import errors
from studio.core.json.js_order import array_index, js_key_order
from studio.core.pre_llm.request import validate_request


@pytest.mark.parametrize(
    ("keys", "ordered"),
    [
        (["b", "a"], ["b", "a"]),
        (["b", "2", "a", "1"], ["1", "2", "b", "a"]),
        (["10", "9", "0"], ["0", "9", "10"]),
        (["x", "01", "1"], ["1", "x", "01"]),
        (["x", "-1", "1.0", "1e3", " 1"], ["x", "-1", "1.0", "1e3", " 1"]),
        (["x", "4294967294"], ["4294967294", "x"]),
        (["x", "4294967295", "99999999999"], ["x", "4294967295", "99999999999"]),
        (["x", "\u0661"], ["x", "\u0661"]),  # an Arabic-Indic digit is not an index
        ([], []),
    ],
)
def test_javascript_key_order(keys, ordered):
    assert js_key_order(keys) == ordered


@pytest.mark.parametrize(
    ("key", "index"),
    [("0", 0), ("7", 7), ("4294967294", 2**32 - 2), ("4294967295", None), ("00", None), ("", None)],
)
def test_array_index(key, index):
    assert array_index(key) == index


def base() -> dict:
    return {
        "system": "",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [],
        "options": {},
    }


def first_pointer(request: dict) -> str | None:
    found = errors(validate_request(request))
    return found[0].pointer if found else None


def test_the_first_unsupported_request_key_is_the_lowest_index():
    request = {"zeta": 1, **base(), "12": 1, "3": 1}
    assert first_pointer(request) == "/3"
    assert [f.pointer for f in errors(validate_request(request))] == ["/3", "/12", "/zeta"]


def test_without_index_keys_insertion_order_holds():
    request = {"zeta": 1, **base(), "alpha": 1}
    assert first_pointer(request) == "/zeta"


def test_an_index_option_comes_before_an_earlier_bad_value():
    request = base()
    request["options"] = {"maxTokens": -1, "temperature": 9, "2": 0}
    assert [f.pointer for f in errors(validate_request(request))] == [
        "/options/2",
        "/options/maxTokens",
        "/options/temperature",
    ]


def test_valid_requests_stay_valid_in_any_key_order():
    request = base()
    request["options"] = {"topP": 0.5, "maxTokens": 10}
    reordered = {k: request[k] for k in reversed(list(request))}
    assert first_pointer(request) is None and first_pointer(reordered) is None
