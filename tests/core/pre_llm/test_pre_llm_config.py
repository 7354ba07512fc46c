"""spec/adf.md §1–§2 and §7: every rule of the pre_llm_hook config, its scope table, its timeout
and the execution limit judged apart from it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from studio.core.pre_llm.config import (
    MAX_LOOPS,
    check_agent_config,
    hook_config_from,
    validate_hook_config,
)
from studio.core.source_ref import parse_source_ref
from tests.support.json_strategies import json_values, python_values

LIMIT_MESSAGE = "limits.execution_timeout_ms must be a positive integer"


def hook_errors(hook: object, home: str = "folder") -> list[tuple[str, str]]:
    found = validate_hook_config(hook, home=home)  # type: ignore[arg-type]
    return [(f.pointer, f.message) for f in found if f.severity == "error"]


def hook_warnings(hook: object, home: str = "folder") -> list[str]:
    found = validate_hook_config(hook, home=home)  # type: ignore[arg-type]
    return [f.pointer for f in found if f.severity == "warning"]


def pointers(hook: object) -> list[str]:
    return [p for p, _ in hook_errors(hook)]


def agent(hook: object, limit: object = 60000) -> dict:
    return {"pre_llm_hook": hook, "limits": {"execution_timeout_ms": limit}}


class TestSource:
    def test_a_plain_source_is_valid(self):
        assert hook_errors({"source": "lib/policy.py:transform"}) == []

    @pytest.mark.parametrize("source", ["", "   ", "\t\n", "\u3000", "\ufeff"])
    def test_empty_after_trimming_is_invalid(self, source):
        assert pointers({"source": source}) == ["/pre_llm_hook/source"]

    def test_python_whitespace_that_javascript_keeps_is_not_trimmed(self):
        # U+001C is whitespace to Python's str.strip but not to JavaScript's trim.
        assert hook_errors({"source": "\x1c"}) == []

    @pytest.mark.parametrize("source", [None, 3, True, ["a"], {"path": "a"}])
    def test_a_source_that_is_not_a_string_is_invalid(self, source):
        assert pointers({"source": source}) == ["/pre_llm_hook/source"]

    def test_a_missing_source_is_invalid(self):
        assert pointers({"scope": "main"}) == ["/pre_llm_hook/source"]

    def test_the_source_is_stored_trimmed(self):
        check = check_agent_config(agent({"source": "  lib/p.py:go \n"}))
        assert check.hook is not None and check.hook.source == "lib/p.py:go"

    @pytest.mark.parametrize(
        "source", ["../x.py", "lib/../../x.py:go", "/etc/passwd", "C:\\x.py", "d:/x.js"]
    )
    def test_a_path_that_leaves_a_folder_workspace_is_a_studio_error(self, source):
        found = [f for f in validate_hook_config({"source": source}) if f.severity == "error"]
        assert [(f.pointer, f.rule) for f in found] == [
            ("/pre_llm_hook/source", "studio.source.path")
        ]
        assert "studio rule" in found[0].message

    @pytest.mark.parametrize("source", ["../x.js", "/etc/x.js:go", "C:\\x.js", "a/../../b.ts"])
    def test_in_an_adf_any_source_key_is_valid_with_a_studio_warning(self, source):
        assert hook_errors({"source": source}, home="adf") == []
        assert hook_warnings({"source": source}, home="adf") == ["/pre_llm_hook/source"]

    @pytest.mark.parametrize("home", ["folder", "adf"])
    def test_empty_after_trimming_is_invalid_in_both_homes(self, home):
        assert [p for p, _ in hook_errors({"source": " \t"}, home)] == ["/pre_llm_hook/source"]

    def test_dot_dot_that_stays_inside_is_valid(self):
        assert hook_errors({"source": "lib/../hooks/p.py"}) == []

    @pytest.mark.parametrize(
        ("source", "path", "function"),
        [
            ("a:b:c", "a:b", "c"),
            ("p:1fn", "p:1fn", "main"),
            ("c:hook.js", "c:hook.js", "main"),
            ("c:hook.js:go", "c:hook.js", "go"),
            ("x:a:b", "x:a", "b"),
            ("lib/p.js:", "lib/p.js:", "main"),
            (":main", ":main", "main"),
        ],
    )
    @pytest.mark.parametrize("home", ["folder", "adf"])
    def test_colons_in_sources(self, source, path, function, home):
        # spec/adf.md §7: a colon splits only before an identifier; c:hook.js is a file.
        assert hook_errors({"source": source}, home) == []
        assert hook_warnings({"source": source}, home) == []
        ref = parse_source_ref(hook_config_from({"source": source}).source)
        assert (ref.path, ref.function) == (path, function)


class TestScope:
    @pytest.mark.parametrize("scope", ["all", "main"])
    def test_all_and_main_are_valid(self, scope):
        assert hook_errors({"source": "a.py", "scope": scope}) == []

    def test_omitted_scope_means_all(self):
        check = check_agent_config(agent({"source": "a.py"}))
        assert check.hook is not None and check.hook.scope == "all"

    @pytest.mark.parametrize("scope", ["ALL", "loop", "", 1, True, ["all"], {}])
    def test_other_scopes_are_invalid(self, scope):
        assert pointers({"source": "a.py", "scope": scope}) == ["/pre_llm_hook/scope"]

    def test_null_scope_is_all_with_a_warning(self):
        # The runtime reads null as omitted; ADF's editor and sys_update_config refuse it.
        check = check_agent_config(agent({"source": "a.py", "scope": None}))
        assert check.valid and check.hook is not None and check.hook.scope == "all"
        assert check.applies_to("main") and check.applies_to("any-loop")
        [warning] = check.findings
        assert (warning.pointer, warning.severity) == ("/pre_llm_hook/scope", "warning")
        assert "sys_update_config" in warning.message

    def test_null_scope_refuses_loops_and_include_main_as_all_does(self):
        found = hook_errors({"source": "a.py", "scope": None, "loops": ["x"], "include_main": True})
        assert [p for p, _ in found] == ["/pre_llm_hook/include_main", "/pre_llm_hook/loops"]

    def test_an_omitted_scope_has_no_warning(self):
        assert validate_hook_config({"source": "a.py"}) == []


class TestLoops:
    def test_loops_scope_with_names_is_valid(self):
        assert (
            hook_errors({"source": "a.py", "scope": "loops", "loops": ["researcher", "r-2"]}) == []
        )

    @pytest.mark.parametrize("loops", [None, [], "researcher", {"a": 1}])
    def test_loops_scope_needs_a_non_empty_array(self, loops):
        assert pointers({"source": "a.py", "scope": "loops", "loops": loops}) == [
            "/pre_llm_hook/loops"
        ]

    def test_loops_scope_without_loops_is_invalid(self):
        assert pointers({"source": "a.py", "scope": "loops"}) == ["/pre_llm_hook/loops"]

    @pytest.mark.parametrize("scope", ["all", "main", None])
    @pytest.mark.parametrize("loops", [["a"], None, []])
    def test_loops_present_with_another_scope_is_invalid(self, scope, loops):
        hook = {"source": "a.py", "loops": loops}
        if scope is not None:
            hook["scope"] = scope
        assert pointers(hook) == ["/pre_llm_hook/loops"]

    def test_at_most_64_loops(self):
        names = [f"l{i}" for i in range(MAX_LOOPS)]
        assert hook_errors({"source": "a.py", "scope": "loops", "loops": names}) == []
        assert pointers({"source": "a.py", "scope": "loops", "loops": [*names, "one-more"]}) == [
            "/pre_llm_hook/loops"
        ]

    @pytest.mark.parametrize(
        "name",
        ["main", "Researcher", "-a", "_a", "a b", "a.b", "", "a" * 33, "é", "a\n", 7, None, True],
    )
    def test_bad_loop_names(self, name):
        assert pointers({"source": "a.py", "scope": "loops", "loops": ["ok", name]}) == [
            "/pre_llm_hook/loops/1"
        ]

    @pytest.mark.parametrize("name", ["a", "0", "a" * 32, "a_b-c", "9lives"])
    def test_good_loop_names(self, name):
        assert hook_errors({"source": "a.py", "scope": "loops", "loops": [name]}) == []

    def test_a_duplicate_name_is_flagged_where_it_repeats(self):
        found = hook_errors({"source": "a.py", "scope": "loops", "loops": ["a", "b", "a"]})
        assert found == [("/pre_llm_hook/loops/2", "loop 'a' is listed twice")]


class TestIncludeMain:
    @pytest.mark.parametrize("value", [True, False])
    def test_allowed_with_loops_scope(self, value):
        hook = {"source": "a.py", "scope": "loops", "loops": ["a"], "include_main": value}
        assert hook_errors(hook) == []

    @pytest.mark.parametrize("scope", ["all", "main", None])
    @pytest.mark.parametrize("value", [True, False])
    def test_even_false_is_invalid_with_another_scope(self, scope, value):
        hook = {"source": "a.py", "include_main": value}
        if scope is not None:
            hook["scope"] = scope
        assert pointers(hook) == ["/pre_llm_hook/include_main"]

    @pytest.mark.parametrize("value", [1, 0, "true", None])
    def test_must_be_a_boolean(self, value):
        hook = {"source": "a.py", "scope": "loops", "loops": ["a"], "include_main": value}
        assert pointers(hook) == ["/pre_llm_hook/include_main"]

    def test_its_type_is_judged_before_its_scope(self):
        found = hook_errors({"source": "a.py", "scope": "main", "include_main": "yes"})
        assert [p for p, _ in found] == ["/pre_llm_hook/include_main"] * 2
        assert "true or false" in found[0][1]
        assert 'only allowed with scope "loops"' in found[1][1]


class TestCheckOrder:
    """spec/adf.md §7: include_main (type, then scope) is checked before loops."""

    @pytest.mark.parametrize("loops", [None, [], ["main"], ["a", "a"], "x"])
    def test_a_bad_include_main_type_comes_before_bad_loops(self, loops):
        hook = {"source": "a.py", "scope": "loops", "loops": loops, "include_main": 1}
        assert pointers(hook)[0] == "/pre_llm_hook/include_main"

    def test_include_main_outside_loops_scope_comes_before_stray_loops(self):
        hook = {"source": "a.py", "scope": "main", "loops": ["x"], "include_main": False}
        assert pointers(hook) == ["/pre_llm_hook/include_main", "/pre_llm_hook/loops"]

    def test_loops_scope_without_loops_after_include_main(self):
        hook = {"source": "a.py", "scope": "loops", "include_main": None}
        assert pointers(hook) == ["/pre_llm_hook/include_main", "/pre_llm_hook/loops"]

    def test_source_and_scope_come_first(self):
        hook = {"include_main": 3, "scope": "nope", "source": ""}
        assert pointers(hook)[:2] == ["/pre_llm_hook/source", "/pre_llm_hook/scope"]

    def test_timeout_comes_last(self):
        hook = {"timeout_ms": 1, "loops": ["x"], "source": "a.py"}
        assert pointers(hook) == ["/pre_llm_hook/loops", "/pre_llm_hook/timeout_ms"]


class TestTimeout:
    @pytest.mark.parametrize("value", [1000, 1000.0, 5000, 300000, 300000.0])
    def test_whole_numbers_in_range(self, value):
        assert hook_errors({"source": "a.py", "timeout_ms": value}) == []

    @pytest.mark.parametrize(
        "value", [999, 300001, 1000.5, 0, -5000, True, False, None, "5000", [5000], float("nan")]
    )
    def test_everything_else_is_invalid(self, value):
        assert pointers({"source": "a.py", "timeout_ms": value}) == ["/pre_llm_hook/timeout_ms"]

    def test_an_integer_too_large_for_a_double_is_named_not_printed(self):
        [(pointer, message)] = hook_errors({"source": "a.py", "timeout_ms": 10**400})
        assert pointer == "/pre_llm_hook/timeout_ms"
        assert "reads as Infinity" in message and len(message) < 200

    def test_a_whole_float_becomes_an_int(self):
        check = check_agent_config(agent({"source": "a.py", "timeout_ms": 1000.0}))
        assert check.hook is not None and check.hook.timeout_ms == 1000
        assert type(check.hook.timeout_ms) is int


class TestOtherKeys:
    def test_unknown_keys_are_a_warning_not_an_error(self):
        found = validate_hook_config({"source": "a.py", "owner": "me"})
        assert [(f.pointer, f.severity) for f in found] == [("/pre_llm_hook/owner", "warning")]
        assert check_agent_config(agent({"source": "a.py", "owner": "me"})).valid


class TestEveryFindingAtOnce:
    def test_all_errors_are_listed_in_the_runtime_order(self):
        hook = {
            "source": " ",
            "scope": "loops",
            "loops": ["main", "ok", "ok"],
            "include_main": "yes",
            "timeout_ms": 1.5,
            "extra": 1,
        }
        found = validate_hook_config(hook)
        assert [f.pointer for f in found] == [
            "/pre_llm_hook/source",
            "/pre_llm_hook/include_main",
            "/pre_llm_hook/loops/0",
            "/pre_llm_hook/loops/2",
            "/pre_llm_hook/timeout_ms",
            "/pre_llm_hook/extra",
        ]
        assert [f.severity for f in found][-1] == "warning"

    def test_messages_name_the_field(self):
        for pointer_, message in hook_errors({"source": "", "scope": "x", "timeout_ms": True}):
            assert pointer_.rsplit("/", 1)[1] in message


class TestWhereItApplies:
    @pytest.mark.parametrize(
        ("hook", "main", "listed", "other"),
        [
            ({"source": "a.py"}, True, True, True),
            ({"source": "a.py", "scope": "all"}, True, True, True),
            ({"source": "a.py", "scope": "main"}, True, False, False),
            ({"source": "a.py", "scope": "loops", "loops": ["x"]}, False, True, False),
            (
                {"source": "a.py", "scope": "loops", "loops": ["x"], "include_main": True},
                True,
                True,
                False,
            ),
            (
                {"source": "a.py", "scope": "loops", "loops": ["x"], "include_main": False},
                False,
                True,
                False,
            ),
        ],
    )
    def test_the_scope_table(self, hook, main, listed, other):
        check = check_agent_config(agent(hook))
        assert check.valid
        assert check.applies_to("main") is main
        assert check.applies_to("x") is listed
        assert check.applies_to("not-declared-yet") is other

    def test_a_malformed_hook_applies_nowhere_and_is_invalid(self):
        check = check_agent_config(agent({"source": "a.py", "scope": "main", "loops": ["x"]}))
        assert not check.valid
        assert check.hook is None

    @pytest.mark.parametrize("falsy", [None, False, 0, ""])
    def test_a_falsy_hook_is_no_hook(self, falsy):
        check = check_agent_config(agent(falsy))
        assert check.valid and check.hook is None
        assert not check.applies_to("main")
        assert [f.severity for f in check.findings] == ["warning"]

    @pytest.mark.parametrize("truthy", [[], {}, "lib/a.py", 1, True])
    def test_a_truthy_hook_that_is_not_a_valid_object_is_invalid(self, truthy):
        assert not check_agent_config(agent(truthy)).valid

    def test_no_hook_key_at_all(self):
        check = check_agent_config({"model": "x"})
        assert check.valid and check.hook is None and check.findings == []


class TestEffectiveTimeout:
    @pytest.mark.parametrize(
        ("timeout", "limit", "expected"),
        [
            (None, 3000, 3000),
            (5000, 3000, 3000),
            (2000, 3000, 2000),
            (None, 900000, 300000),
            (300000, 900000, 300000),
            (1000.0, 2000.0, 1000),
            (None, 1, 1),
            (None, 10**20, 300000),
            (5000, 1e300, 5000),
        ],
    )
    def test_min_of_timeout_limit_and_ceiling(self, timeout, limit, expected):
        hook: dict = {"source": "a.py"}
        if timeout is not None:
            hook["timeout_ms"] = timeout
        check = check_agent_config(agent(hook, limit))
        assert check.valid and check.runtime_errors == []
        assert check.effective_timeout_ms == expected


class TestExecutionLimit:
    """spec/adf.md §7: the limit is judged apart from the hook config, with no default."""

    @pytest.mark.parametrize(
        "limit", [0, -1, 1.5, True, False, "60000", None, [60000], {}, float("inf"), 10**400]
    )
    def test_a_bad_limit_leaves_the_hook_valid_and_fails_hooked_calls(self, limit):
        check = check_agent_config(agent({"source": "a.py", "scope": "main"}, limit))
        assert check.valid and check.hook is not None
        assert [(f.pointer, f.message) for f in check.runtime_errors] == [
            ("/limits/execution_timeout_ms", LIMIT_MESSAGE)
        ]
        assert check.effective_timeout_ms is None

    @pytest.mark.parametrize(
        "document",
        [
            {"pre_llm_hook": {"source": "a.py"}},
            {"pre_llm_hook": {"source": "a.py"}, "limits": {}},
            {"pre_llm_hook": {"source": "a.py"}, "limits": None},
            {"pre_llm_hook": {"source": "a.py"}, "limits": 5},
            {"pre_llm_hook": {"source": "a.py"}, "limits": [60000]},
            {"pre_llm_hook": {"source": "a.py"}, "limits": {"execution_timeout_ms": None}},
        ],
    )
    def test_a_missing_limit_has_no_default(self, document):
        check = check_agent_config(document)
        assert check.valid
        assert [f.message for f in check.runtime_errors] == [LIMIT_MESSAGE]
        assert check.execution_limit_ms is None and check.effective_timeout_ms is None

    @pytest.mark.parametrize("limit", [None, 0, 10**400])
    def test_a_bad_limit_does_not_change_where_the_hook_applies(self, limit):
        hook = {"source": "a.py", "scope": "loops", "loops": ["x"], "include_main": True}
        good = check_agent_config(agent(hook))
        bad = check_agent_config(agent(hook, limit))
        loops = ["x", "y", "main"]
        assert bad.applies_table(loops) == good.applies_table(loops)
        assert bad.applies_table(loops) == {"main": True, "x": True, "y": False}

    def test_without_a_hook_the_limit_fails_nothing(self):
        for document in [{}, {"pre_llm_hook": None, "limits": 0}, {"limits": "x"}]:
            check = check_agent_config(document)
            assert check.valid and check.runtime_errors == []

    def test_an_invalid_hook_is_reported_with_the_limit_apart(self):
        check = check_agent_config({"pre_llm_hook": {"source": ""}})
        assert not check.valid and check.hook is None
        assert [f.pointer for f in check.findings] == ["/pre_llm_hook/source"]
        assert [f.message for f in check.runtime_errors] == [LIMIT_MESSAGE]

    def test_a_whole_float_limit_is_an_integer(self):
        check = check_agent_config(agent({"source": "a.py"}, 2000.0))
        assert check.execution_limit_ms == 2000 and type(check.execution_limit_ms) is int

    def test_the_largest_finite_integer_is_a_limit(self):
        largest = int(1.7976931348623157e308)
        assert check_agent_config(agent({"source": "a.py"}, largest)).runtime_errors == []
        assert check_agent_config(agent({"source": "a.py"}, largest * 2)).runtime_errors != []

    def test_a_document_that_is_not_an_object(self):
        assert [f.pointer for f in check_agent_config([1]).findings] == [""]


@given(json_values)
def test_no_config_check_raises_on_any_json_value(value):
    check_agent_config(value)
    check_agent_config({"pre_llm_hook": value, "limits": value})
    validate_hook_config(value)


@given(
    st.dictionaries(
        st.sampled_from(["source", "scope", "loops", "include_main", "timeout_ms"]), python_values
    )
)
def test_no_config_check_raises_on_python_values(hook):
    found = validate_hook_config(hook)
    assert all(f.message for f in found)
