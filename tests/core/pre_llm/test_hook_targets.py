"""spec/adf.md §5: target rows, their mapping to the config and back, and draft validation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from studio.core.pre_llm.config import MAX_LOOPS, validate_hook_config
from studio.core.pre_llm.targets import (
    NEW_HOOK_ROWS,
    DraftInvalid,
    HookDraft,
    SourceFile,
    TargetKind,
    TargetRow,
    add_row,
    applies_view,
    choose,
    config_meaning,
    draft_from_config,
    draft_to_config,
    move_row,
    remove_row,
    rows_from_config,
    summary,
    validate_draft,
)

ALL = TargetRow.all_streams()
MAIN = TargetRow.main()
EMPTY = TargetRow.empty()


def loop(name: str) -> TargetRow:
    return TargetRow.loop(name)


def draft(*rows: TargetRow, source: str = "lib/p.ts:go", timeout: str = "") -> HookDraft:
    return HookDraft(source=source, timeout=timeout, rows=rows)


def messages(d: HookDraft) -> list[tuple[str, str]]:
    return [(f.pointer, f.message) for f in validate_draft(d)]


class TestEditing:
    def test_a_new_hook_starts_with_main(self):
        assert HookDraft().rows == (MAIN,) == NEW_HOOK_ROWS

    def test_add_target_adds_an_empty_row(self):
        assert add_row((MAIN,)) == (MAIN, EMPTY)

    def test_choosing_all_streams_clears_every_other_row(self):
        rows = (MAIN, loop("a"), EMPTY)
        assert choose(rows, 2, ALL) == (ALL,)

    def test_choosing_a_specific_target_gives_up_all_streams(self):
        rows = add_row((ALL,))
        assert choose(rows, 1, loop("a")) == (loop("a"),)

    def test_leaving_a_row_empty_keeps_all_streams(self):
        assert choose((ALL, loop("a")), 1, EMPTY) == (ALL, EMPTY)

    def test_remove_and_move(self):
        rows = (MAIN, loop("a"), loop("b"))
        assert remove_row(rows, 1) == (MAIN, loop("b"))
        assert move_row(rows, 2, 0) == (loop("b"), MAIN, loop("a"))


class TestRowsToConfig:
    def save(self, *rows: TargetRow) -> dict:
        return draft_to_config(draft(*rows))

    def test_only_main(self):
        assert self.save(MAIN) == {"source": "lib/p.ts:go", "scope": "main"}

    def test_main_and_loops(self):
        assert self.save(MAIN, loop("a"), loop("b")) == {
            "source": "lib/p.ts:go",
            "scope": "loops",
            "loops": ["a", "b"],
            "include_main": True,
        }

    def test_loops_only_has_no_include_main_key(self):
        saved = self.save(loop("a"))
        assert saved == {"source": "lib/p.ts:go", "scope": "loops", "loops": ["a"]}
        assert "include_main" not in saved

    def test_all_streams(self):
        assert self.save(ALL) == {"source": "lib/p.ts:go", "scope": "all"}

    def test_the_timeout_is_saved_as_a_whole_number(self):
        assert draft_to_config(draft(MAIN, timeout=" 5000 "))["timeout_ms"] == 5000

    def test_a_draft_with_errors_is_never_saved(self):
        with pytest.raises(DraftInvalid) as raised:
            draft_to_config(draft(MAIN, EMPTY))
        assert [f.pointer for f in raised.value.findings] == ["/targets/1"]


class TestConfigToRows:
    def test_an_all_config_opens_as_all_streams_never_a_list(self):
        assert rows_from_config({"source": "a", "scope": "all"}) == (ALL,)
        assert rows_from_config({"source": "a"}) == (ALL,)

    def test_a_null_scope_opens_as_all_streams_and_saves_as_all(self):
        # spec/adf.md §7: the runtime reads null as omitted; ADF's editor writes "all".
        config = {"source": "a.py", "scope": None}
        assert rows_from_config(config) == (ALL,)
        assert draft_to_config(draft_from_config(config)) == {"source": "a.py", "scope": "all"}

    def test_main(self):
        assert rows_from_config({"source": "a", "scope": "main"}) == (MAIN,)

    def test_loops_with_and_without_main(self):
        config = {"source": "a", "scope": "loops", "loops": ["x", "y"], "include_main": True}
        assert rows_from_config(config) == (MAIN, loop("x"), loop("y"))
        config["include_main"] = False
        assert rows_from_config(config) == (loop("x"), loop("y"))


class TestKeepingTheFile:
    def test_unedited_keys_and_their_order_are_kept(self):
        original = {"owner": "team", "timeout_ms": 1000.0, "source": "a.py", "note": [1]}
        d = draft_from_config(original)
        assert d.rows == (ALL,)
        saved = draft_to_config(d)
        assert saved == original
        assert list(saved) == list(original)

    def test_changing_rows_drops_keys_that_no_longer_apply(self):
        original = {"source": "a.py", "scope": "loops", "loops": ["x"], "include_main": True}
        d = draft_from_config(original)
        saved = draft_to_config(d.with_rows(choose(d.rows, 0, ALL)))
        assert saved == {"source": "a.py", "scope": "all"}

    def test_clearing_the_timeout_removes_the_key(self):
        d = draft_from_config({"source": "a.py", "scope": "main", "timeout_ms": 2000})
        assert "timeout_ms" not in draft_to_config(HookDraft(d.source, "", d.rows, d.original))


class TestDraftValidation:
    def test_a_source_in_a_language_no_runtime_runs_is_a_warning_on_the_source(self):
        def language(path: str) -> str | None:
            return None if path.endswith(".ts") else "the studio has no runtime for it"

        ruby = draft(MAIN, source="lib/policy.rb:transform")
        assert validate_draft(ruby) == []
        found = validate_draft(ruby, language)
        assert [(f.pointer, f.severity) for f in found] == [("/source", "warning")]
        assert found[0].message.startswith("The studio has no runtime for it")
        assert draft_to_config(ruby)["source"] == "lib/policy.rb:transform"
        assert validate_draft(draft(MAIN), language) == []
        outside = validate_draft(draft(MAIN, source="../x.ts"), language)
        assert [(f.pointer, f.severity) for f in outside] == [("/source", "error")]

    def test_a_python_source_is_a_warning_that_adf_will_not_load_it(self):
        found = validate_draft(draft(MAIN, source="lib/policy.py:transform"))
        assert [(f.pointer, f.severity, f.rule) for f in found] == [
            ("/source", "warning", "targets.adf_language")
        ]
        assert "runs in the studio only; ADF will not load it" in found[0].message
        for source in ("lib/policy.ts:transform", "lib/policy.js", "lib/policy.pyc"):
            assert validate_draft(draft(MAIN, source=source)) == []

    def test_what_is_at_the_source_path(self):
        files = {
            "lib/good.ts": SourceFile(True, ("transform", "main")),
            "lib/broken.ts": SourceFile(True, ("helper",), "Unexpected token (line 3)"),
            "lib/other.rb": SourceFile(True, None),
        }
        asked: list[str] = []

        def source_file(path: str) -> SourceFile | None:
            asked.append(path)
            return files.get(path, SourceFile(False)) if path != "lib/unknown.ts" else None

        def found(source: str) -> list[tuple[str, str, str]]:
            return [
                (f.severity, f.rule, f.message)
                for f in validate_draft(draft(MAIN, source=source), None, source_file)
            ]

        assert found("lib/good.ts:transform") == found("lib/good.ts") == []
        assert found("lib/unknown.ts:x") == []
        assert found("lib/other.rb:anything") == []
        assert found("lib/gone.ts:transform") == [
            (
                "error",
                "source.missing",
                "lib/gone.ts does not exist; every call of the hook fails until it exists",
            )
        ]
        assert found("lib/good.ts:transfrom") == [
            (
                "error",
                "source.function_missing",
                "lib/good.ts has no function `transfrom`; it has: transform, main "
                "(did you mean `transform`?)",
            )
        ]
        # A file that does not parse: its absence is only likely, so nothing blocks Save.
        assert [(s, r) for s, r, _ in found("lib/broken.ts:transform")] == [
            ("warning", "source.broken"),
            ("warning", "source.function_unchecked"),
        ]
        assert [(s, r) for s, r, _ in found("lib/broken.ts:helper")] == [
            ("warning", "source.broken")
        ]
        # A path that cannot be in the workspace is not looked up.
        asked.clear()
        assert [s for s, _, _ in found("../x.ts")] == ["error"]
        assert asked == []

    def test_every_problem_is_listed_at_once(self):
        d = HookDraft(
            source="  ",
            timeout="12.5",
            rows=(MAIN, EMPTY, loop("Bad Name"), loop("a"), loop("a"), MAIN, loop("")),
        )
        assert [p for p, _ in messages(d)] == [
            "/source",
            "/targets/1",
            "/targets/2",
            "/targets/4",
            "/targets/5",
            "/targets/6",
            "/timeout_ms",
        ]

    def test_no_target(self):
        assert messages(draft()) == [("/targets", "Add at least one target")]

    def test_main_typed_as_a_free_name(self):
        (only,) = messages(draft(loop("main")))
        assert only[0] == "/targets/0" and "Main" in only[1]

    def test_more_than_64_loops(self):
        rows = tuple(loop(f"l{i}") for i in range(MAX_LOOPS + 1))
        assert messages(draft(*rows)) == [
            ("/targets", "65 loops are targeted; at most 64 are allowed")
        ]
        assert messages(draft(*rows[:MAX_LOOPS])) == []

    @pytest.mark.parametrize("text", ["999", "300001", "1e3.5", "abc", "1000.5", "true", "-1000"])
    def test_bad_timeouts(self, text):
        assert [p for p, _ in messages(draft(MAIN, timeout=text))] == ["/timeout_ms"]

    @pytest.mark.parametrize("text", ["", "1000", "1000.0", "1e3", "300000", " 2500 "])
    def test_good_timeouts(self, text):
        assert messages(draft(MAIN, timeout=text)) == []

    def test_a_source_outside_the_workspace(self):
        assert [p for p, _ in messages(draft(MAIN, source="../x.py"))] == ["/source"]

    def test_all_streams_with_other_rows(self):
        assert [p for p, _ in messages(draft(ALL, loop("a")))] == ["/targets/0"]


class TestSummaryAndApplies:
    @pytest.mark.parametrize(
        ("rows", "text"),
        [
            ((ALL,), "All streams"),
            ((MAIN,), "Main"),
            ((loop("a"),), "1 target"),
            ((MAIN, loop("a"), loop("b")), "3 targets"),
            ((), "No target"),
            ((MAIN, EMPTY), "Main"),
        ],
    )
    def test_summary(self, rows, text):
        assert summary(rows) == text

    def test_applies_view(self):
        rows = (MAIN, loop("researcher"), loop("later"))
        assert applies_view(rows, ["researcher", "reviewer"]) == [
            ("Main", True),
            ("researcher", True),
            ("reviewer", False),
            ("any future loop", False),
        ]
        assert applies_view((ALL,), ["reviewer"]) == [
            ("Main", True),
            ("reviewer", True),
            ("any future loop", True),
        ]


loop_names = st.from_regex(r"[a-z0-9][a-z0-9_-]{0,31}", fullmatch=True).filter(
    lambda n: n != "main" and "\n" not in n
)


@st.composite
def valid_rows(draw) -> tuple[TargetRow, ...]:
    if draw(st.booleans()) and draw(st.booleans()):
        return (ALL,)
    names = draw(st.lists(loop_names, max_size=MAX_LOOPS, unique=True))
    with_main = draw(st.booleans()) or not names
    return ((MAIN,) if with_main else ()) + tuple(loop(n) for n in names)


@st.composite
def valid_configs(draw) -> dict:
    config: dict = {"source": "lib/p.ts:go"}
    scope = draw(st.sampled_from([None, "all", "main", "loops"]))
    if scope is not None:
        config["scope"] = scope
    if scope == "loops":
        config["loops"] = draw(st.lists(loop_names, min_size=1, max_size=MAX_LOOPS, unique=True))
        include = draw(st.sampled_from([None, True, False]))
        if include is not None:
            config["include_main"] = include
    if draw(st.booleans()):
        config["timeout_ms"] = draw(
            st.integers(1000, 300000) | st.integers(1000, 300000).map(float)
        )
    return config


@given(valid_rows())
def test_rows_to_config_to_rows_is_the_identity(rows):
    saved = draft_to_config(draft(*rows))
    assert validate_hook_config(saved) == []
    assert rows_from_config(saved) == rows


@given(valid_configs(), st.lists(loop_names, max_size=5))
def test_config_to_rows_to_config_keeps_the_meaning(config, other_loops):
    assert validate_hook_config(config) == []
    saved = draft_to_config(draft_from_config(config))
    assert validate_hook_config(saved) == []
    probe = [*config.get("loops", []), *other_loops]
    assert config_meaning(saved, probe) == config_meaning(config, probe)


@given(st.lists(st.sampled_from([ALL, MAIN, EMPTY, loop("a"), loop("b"), loop("")]), max_size=6))
def test_a_draft_without_findings_always_saves_a_valid_config(rows):
    d = draft(*rows)
    if validate_draft(d):
        with pytest.raises(DraftInvalid):
            draft_to_config(d)
    else:
        assert validate_hook_config(draft_to_config(d)) == []
        assert all(r.kind is not TargetKind.EMPTY for r in rows)
