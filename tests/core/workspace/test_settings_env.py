"""``hookstudio.json``'s ``env`` and ``pass_env``: an entry no process can be started with is a
finding at its JSON path, before any hook runs."""

from __future__ import annotations

import pytest

from studio.core.workspace.folder import STUDIO_FILE, WorkspaceFileError
from tests.support.workspaces import make_workspace, write_json

EMPTY_NAME = "an environment variable name cannot be empty"
EQUALS_IN_NAME = "an environment variable name cannot contain '='"
NUL_IN_NAME = "an environment variable name cannot contain a NUL character"
NUL_IN_VALUE = "an environment variable value cannot contain a NUL character"


@pytest.mark.parametrize(
    ("settings", "found"),
    [
        ({"env": {"A=B": "x"}}, [("/env/A=B", EQUALS_IN_NAME)]),
        ({"env": {"=": "x"}}, [("/env/=", EQUALS_IN_NAME)]),
        ({"env": {"": "x"}}, [("/env/", EMPTY_NAME)]),
        ({"env": {"A\0B": "x"}}, [("/env/A\0B", NUL_IN_NAME)]),
        ({"env": {"OK": "a\0b"}}, [("/env/OK", NUL_IN_VALUE)]),
        ({"pass_env": ["HOME", "A=B"]}, [("/pass_env/1", EQUALS_IN_NAME)]),
        ({"pass_env": [""]}, [("/pass_env/0", EMPTY_NAME)]),
        ({"pass_env": ["X\0"]}, [("/pass_env/0", NUL_IN_NAME)]),
        (
            {"env": {"GOOD": "1", "": "x", "V": "\0"}, "pass_env": ["LANG", "a=b"]},
            [("/env/", EMPTY_NAME), ("/env/V", NUL_IN_VALUE), ("/pass_env/1", EQUALS_IN_NAME)],
        ),
    ],
)
def test_an_entry_no_process_takes_is_a_finding_at_its_path(tmp_path, settings, found):
    workspace = make_workspace(tmp_path)
    write_json(workspace.settings_path, {"version": 1, **settings})
    with pytest.raises(WorkspaceFileError) as raised:
        workspace.settings()
    assert raised.value.file == STUDIO_FILE
    assert [(f.pointer, f.message) for f in raised.value.findings] == found


def test_names_and_values_a_process_takes_are_kept(tmp_path):
    workspace = make_workspace(tmp_path)
    env = {"SUPPORT_REGION": "eu", "EMPTY": "", "LOWER_case.dots-1": "a=b c\tñ"}
    write_json(workspace.settings_path, {"version": 1, "env": env, "pass_env": ["LANG", "X.Y"]})
    settings = workspace.settings()
    assert settings.env == env
    assert settings.pass_env == ["LANG", "X.Y"]
