"""The three-way merge of ``pre_llm_hook`` when the agent file changed outside the studio: the
merge of values, then the save of ``agent.json`` and of an ``.adf`` agent file on real files."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from studio.core.pre_llm.targets import HookDraft, TargetRow, draft_to_config
from studio.core.workspace.adf_file import AdfFile
from studio.core.workspace.adf_workspace import AdfHookDocument
from studio.core.workspace.agent_document import AgentDocument, AgentDocumentError, HookConflict
from studio.core.workspace.hook_merge import (
    ABSENT,
    MergeKind,
    hook_diff,
    hook_in,
    merge_hook,
    other_keys_changed,
)
from tests.support.adf_files import build_adf, default_config, table_dump

BASE = {"source": "lib/policy.ts:transform", "scope": "main", "timeout_ms": 5000}
OURS = {**BASE, "timeout_ms": 8000}
THEIRS = {**BASE, "timeout_ms": 9000}


class TestMergeOfValues:
    def test_nobody_changed_it(self) -> None:
        merge = merge_hook(BASE, dict(BASE), dict(BASE))
        assert merge.kind is MergeKind.UNCHANGED
        assert merge.result == BASE

    def test_only_theirs_changed_it(self) -> None:
        merge = merge_hook(BASE, BASE, THEIRS)
        assert merge.kind is MergeKind.THEIRS
        assert merge.result == THEIRS

    def test_only_ours_changed_it(self) -> None:
        merge = merge_hook(BASE, OURS, BASE)
        assert merge.kind is MergeKind.OURS
        assert merge.result == OURS

    def test_both_changed_it_the_same_way(self) -> None:
        merge = merge_hook(BASE, dict(THEIRS), THEIRS)
        assert merge.kind is MergeKind.SAME
        assert merge.result == THEIRS

    def test_both_changed_it_differently_is_the_users_choice(self) -> None:
        merge = merge_hook(BASE, OURS, THEIRS)
        assert merge.kind is MergeKind.CONFLICT and merge.conflict
        assert (merge.ours, merge.theirs) == (OURS, THEIRS)
        with pytest.raises(ValueError, match="choose"):
            _ = merge.result

    def test_removed_outside_while_unchanged_here_is_removed(self) -> None:
        merge = merge_hook(BASE, BASE, ABSENT)
        assert merge.kind is MergeKind.THEIRS
        assert merge.result is ABSENT

    def test_removed_outside_while_edited_here_is_a_conflict(self) -> None:
        assert merge_hook(BASE, OURS, ABSENT).conflict

    def test_added_outside_while_none_here_is_taken(self) -> None:
        merge = merge_hook(ABSENT, ABSENT, THEIRS)
        assert merge.kind is MergeKind.THEIRS
        assert merge.result == THEIRS

    def test_added_outside_and_here_differently_is_a_conflict(self) -> None:
        assert merge_hook(ABSENT, OURS, THEIRS).conflict

    def test_added_on_both_sides_alike_is_the_same(self) -> None:
        assert merge_hook(ABSENT, dict(OURS), OURS).kind is MergeKind.SAME

    def test_null_is_a_value_not_an_absent_key(self) -> None:
        assert merge_hook(ABSENT, ABSENT, None).kind is MergeKind.THEIRS
        assert merge_hook(None, None, ABSENT).kind is MergeKind.THEIRS

    def test_a_number_written_otherwise_is_a_change(self) -> None:
        # 5000.0 is another text than 5000 in the file.
        assert merge_hook(BASE, BASE, {**BASE, "timeout_ms": 5000.0}).kind is MergeKind.THEIRS

    def test_a_reordered_hook_is_a_change(self) -> None:
        reordered = dict(reversed(list(BASE.items())))
        assert merge_hook(BASE, BASE, reordered).kind is MergeKind.THEIRS

    def test_hook_in_tells_an_absent_key_from_null(self) -> None:
        assert hook_in({"model": "x"}) is ABSENT
        assert hook_in({"pre_llm_hook": None}) is None

    def test_other_keys_changed_ignores_the_hook(self) -> None:
        before = {"model": "a", "pre_llm_hook": BASE}
        assert not other_keys_changed(before, {"model": "a", "pre_llm_hook": THEIRS})
        assert other_keys_changed(before, {"model": "b", "pre_llm_hook": BASE})
        assert other_keys_changed(before, {"pre_llm_hook": BASE})


class TestDiff:
    def test_a_unified_diff_from_theirs_to_ours_of_the_pretty_hook(self) -> None:
        diff = hook_diff(THEIRS, OURS, "agent.json (on disk)", "your edit")
        lines = diff.splitlines()
        assert lines[0] == "--- agent.json (on disk)"
        assert lines[1] == "+++ your edit"
        assert '-  "timeout_ms": 9000' in lines
        assert '+  "timeout_ms": 8000' in lines
        # Every line of the hook is there, not only the changed one.
        assert '   "source": "lib/policy.ts:transform",' in lines
        assert '   "scope": "main",' in lines

    def test_an_absent_hook_reads_as_such(self) -> None:
        lines = hook_diff(ABSENT, OURS, "theirs", "ours").splitlines()
        assert "-(no pre_llm_hook)" in lines
        assert "+{" in lines

    def test_no_difference_is_no_diff(self) -> None:
        assert hook_diff(BASE, dict(BASE), "a", "b") == ""


# ---- agent.json: the merge on save, on real files ----------------------------------------------

CONFIG: dict[str, Any] = {
    "name": "support-agent",
    "model": "claude-sonnet",
    "pre_llm_hook": BASE,
    "limits": {"execution_timeout_ms": 30000},
}


def ours_draft(timeout: str = "8000") -> HookDraft:
    return HookDraft(source="lib/policy.ts:transform", timeout=timeout, rows=(TargetRow.main(),))


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    path = tmp_path / "agent.json"
    path.write_text(json.dumps(CONFIG, indent=2) + "\n")
    return path


def write_outside(path: Path, text: str) -> None:
    path.write_bytes(text.encode("utf-8"))


class TestSavingAgentJson:
    def test_only_ours_changed_the_hook_keeps_their_other_edit_byte_for_byte(
        self, agent: Path
    ) -> None:
        document = AgentDocument.load(agent)
        # Their edit: another model, and a style of their own around it.
        hook_text = json.dumps(BASE, indent=2).replace("\n", "\n  ")
        before = '{\n  "name": "support-agent",\n  "model" :  "other-model",\n  "pre_llm_hook": '
        after = ',\n  "limits": {"execution_timeout_ms": 30000},\n  "added": [1,2]\n}\n'
        write_outside(agent, before + hook_text + after)
        document.save(ours_draft())
        written = agent.read_text()
        assert written.startswith(before) and written.endswith(after)
        assert json.loads(written) == {
            "name": "support-agent",
            "model": "other-model",
            "pre_llm_hook": OURS,
            "limits": {"execution_timeout_ms": 30000},
            "added": [1, 2],
        }
        assert not document.changed_on_disk()
        assert document.hook_config == OURS

    def test_only_theirs_changed_the_hook_saving_the_loaded_one_writes_nothing(
        self, agent: Path
    ) -> None:
        document = AgentDocument.load(agent)
        theirs = json.dumps({**CONFIG, "pre_llm_hook": THEIRS}, indent=4)
        write_outside(agent, theirs)
        document.save_config(BASE)
        assert agent.read_text() == theirs
        assert document.hook_config == THEIRS
        assert not document.changed_on_disk()

    def test_both_changed_it_the_same_way_writes_nothing(self, agent: Path) -> None:
        document = AgentDocument.load(agent)
        theirs = json.dumps({**CONFIG, "model": "x", "pre_llm_hook": OURS}, indent=4)
        write_outside(agent, theirs)
        document.save(ours_draft())
        assert agent.read_text() == theirs
        assert document.document["model"] == "x"

    def test_both_changed_it_differently_is_a_conflict_and_nothing_is_written(
        self, agent: Path
    ) -> None:
        document = AgentDocument.load(agent)
        theirs = json.dumps({**CONFIG, "pre_llm_hook": THEIRS}, indent=2)
        write_outside(agent, theirs)
        with pytest.raises(HookConflict) as caught:
            document.save(ours_draft())
        merge = caught.value.merge
        assert (merge.base, merge.ours, merge.theirs) == (BASE, OURS, THEIRS)
        assert "keep yours or take theirs" in str(caught.value)
        assert agent.read_text() == theirs
        # Keep mine, once chosen: the file is taken as the new base, and ours goes over it.
        document.reload()
        document.save(ours_draft())
        assert json.loads(agent.read_text())["pre_llm_hook"] == OURS

    def test_a_file_malformed_outside_is_a_clear_error_and_nothing_is_written(
        self, agent: Path
    ) -> None:
        document = AgentDocument.load(agent)
        broken = '{\n  "name": "support-agent",\n  "model": \n}\n'
        write_outside(agent, broken)
        with pytest.raises(AgentDocumentError) as caught:
            document.save(ours_draft())
        error = caught.value
        assert "not JSON" in error.problem and "does not overwrite" in error.problem
        assert (error.line, error.column) == (4, 1)
        assert agent.read_text() == broken

    def test_a_hook_removed_outside_while_edited_here_is_a_conflict(self, agent: Path) -> None:
        document = AgentDocument.load(agent)
        theirs = json.dumps({k: v for k, v in CONFIG.items() if k != "pre_llm_hook"})
        write_outside(agent, theirs)
        with pytest.raises(HookConflict) as caught:
            document.save(ours_draft())
        assert caught.value.merge.theirs is ABSENT
        assert agent.read_text() == theirs

    def test_a_hook_removed_outside_and_not_edited_here_stays_removed(self, agent: Path) -> None:
        document = AgentDocument.load(agent)
        theirs = json.dumps({k: v for k, v in CONFIG.items() if k != "pre_llm_hook"})
        write_outside(agent, theirs)
        document.save_config(BASE)
        assert agent.read_text() == theirs
        assert not document.has_hook

    def test_a_hook_added_outside_while_one_is_added_here_is_a_conflict(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "agent.json"
        path.write_text('{"name": "support-agent"}')
        document = AgentDocument.load(path)
        theirs = json.dumps({"name": "support-agent", "pre_llm_hook": THEIRS})
        write_outside(path, theirs)
        with pytest.raises(HookConflict) as caught:
            document.save(ours_draft())
        assert caught.value.merge.base is ABSENT
        assert caught.value.merge.theirs == THEIRS
        assert path.read_text() == theirs

    def test_remove_keeps_their_edit_of_another_key(self, agent: Path) -> None:
        document = AgentDocument.load(agent)
        write_outside(agent, json.dumps({**CONFIG, "model": "other"}, indent=2))
        document.remove_hook()
        assert json.loads(agent.read_text()) == {
            "name": "support-agent",
            "model": "other",
            "limits": {"execution_timeout_ms": 30000},
        }

    def test_force_keeps_ours_over_their_hook_and_theirs_elsewhere(self, agent: Path) -> None:
        document = AgentDocument.load(agent)
        write_outside(agent, json.dumps({**CONFIG, "model": "m2", "pre_llm_hook": THEIRS}))
        document.save(ours_draft(), force=True)
        assert json.loads(agent.read_text()) == {**CONFIG, "model": "m2", "pre_llm_hook": OURS}


# ---- an .adf agent file -------------------------------------------------------------------------

ADF_BASE = default_config()["pre_llm_hook"]


def config_of(path: Path) -> dict[str, Any]:
    db = sqlite3.connect(path)
    try:
        return json.loads(db.execute("SELECT config_json FROM adf_config").fetchone()[0])
    finally:
        db.close()


def set_config_outside(path: Path, text: str) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("UPDATE adf_config SET config_json = ? WHERE id = 1", (text,))
    finally:
        db.close()


@pytest.fixture
def adf(tmp_path: Path) -> Path:
    return build_adf(tmp_path / "agent.adf")


class TestSavingAnAdf:
    def test_only_ours_changed_the_hook_keeps_their_model(self, adf: Path) -> None:
        document = AdfHookDocument.load_adf(AdfFile.open(adf))
        changed = {**default_config(), "model": {"provider": "openai", "model_id": "gpt"}}
        set_config_outside(adf, json.dumps(changed, separators=(",", ":"), ensure_ascii=False))
        ours = draft_to_config(ours_draft())
        document.save_config(ours)
        saved = config_of(adf)
        assert saved["model"] == {"provider": "openai", "model_id": "gpt"}
        assert saved["pre_llm_hook"] == ours

    def test_only_theirs_changed_the_hook_writes_nothing(self, adf: Path) -> None:
        document = AdfHookDocument.load_adf(AdfFile.open(adf))
        theirs = {**ADF_BASE, "timeout_ms": 9000}
        set_config_outside(adf, json.dumps({**default_config(), "pre_llm_hook": theirs}))
        before = table_dump(adf)
        document.save_config(ADF_BASE)
        assert table_dump(adf) == before
        assert document.hook_config == theirs

    def test_both_changed_it_differently_is_a_conflict(self, adf: Path) -> None:
        document = AdfHookDocument.load_adf(AdfFile.open(adf))
        theirs = {**ADF_BASE, "timeout_ms": 9000}
        set_config_outside(adf, json.dumps({**default_config(), "pre_llm_hook": theirs}))
        before = table_dump(adf)
        ours = draft_to_config(ours_draft())
        with pytest.raises(HookConflict) as caught:
            document.save_config(ours)
        assert (caught.value.merge.theirs, caught.value.merge.ours) == (theirs, ours)
        assert table_dump(adf) == before

    def test_a_config_malformed_outside_is_a_clear_error_and_nothing_is_written(
        self, adf: Path
    ) -> None:
        document = AdfHookDocument.load_adf(AdfFile.open(adf))
        set_config_outside(adf, '{"name": "support-agent",')
        before = table_dump(adf)
        with pytest.raises(AgentDocumentError, match="not JSON"):
            document.save_config(draft_to_config(ours_draft()))
        assert table_dump(adf) == before
