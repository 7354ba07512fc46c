"""The studio's own settings file: what is saved comes back, and only what differs from the
defaults is written."""

from __future__ import annotations

import json

from studio.core.app_settings import AppSettings, load_settings, save_settings


def test_the_node_choice_survives_a_round_trip(tmp_path):
    path = tmp_path / "config" / "settings.json"
    chosen = AppSettings(node="/opt/node-22.13/bin/node", rerun_on_save=True)
    save_settings(path, chosen)
    assert load_settings(path) == chosen
    assert json.loads(path.read_text())["changed"] == {
        "node": "/opt/node-22.13/bin/node",
        "rerun_on_save": True,
    }


def test_the_bundled_node_is_the_default_and_is_not_written(tmp_path):
    path = tmp_path / "settings.json"
    save_settings(path, AppSettings(node=""))
    assert json.loads(path.read_text())["changed"] == {}
    assert load_settings(path).node == ""


def test_a_node_setting_of_the_wrong_type_gives_the_defaults(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"version": 1, "changed": {"node": 22}}))
    assert load_settings(path) == AppSettings()


def test_the_sample_and_loop_of_each_workspace_survive_a_round_trip(tmp_path):
    from studio.core.app_settings import WorkspaceChoices

    path = tmp_path / "settings.json"
    settings = AppSettings().remember_choices(
        "/work/a", WorkspaceChoices(sample="support-ticket", loop="reviewer")
    )
    settings = settings.remember_choices("/work/b", WorkspaceChoices(sample="chain-refund"))
    save_settings(path, settings)
    assert json.loads(path.read_text())["changed"] == {
        "workspace_choices": {
            "/work/a": {"sample": "support-ticket", "loop": "reviewer"},
            "/work/b": {"sample": "chain-refund", "loop": None},
        }
    }
    loaded = load_settings(path)
    assert loaded.workspace_choices["/work/a"] == WorkspaceChoices(
        sample="support-ticket", loop="reviewer"
    )


def test_only_the_most_recently_used_workspaces_are_remembered():
    from studio.core.app_settings import MAX_REMEMBERED_WORKSPACES, WorkspaceChoices

    settings = AppSettings()
    for i in range(MAX_REMEMBERED_WORKSPACES + 5):
        settings = settings.remember_choices(f"/w/{i}", WorkspaceChoices(sample=str(i)))
    # Choosing again in an old workspace makes it recent.
    settings = settings.remember_choices("/w/6", WorkspaceChoices(sample="again"))
    settings = settings.remember_choices("/w/new", WorkspaceChoices())
    paths = list(settings.workspace_choices)
    assert len(paths) == MAX_REMEMBERED_WORKSPACES
    assert paths[-2:] == ["/w/6", "/w/new"]
    assert settings.workspace_choices["/w/6"].sample == "again"
    # The five first and then the oldest left, /w/5, were forgotten; /w/6 was used since.
    assert all(f"/w/{i}" not in paths for i in range(6)) and "/w/7" in paths
