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
