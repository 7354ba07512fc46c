"""A result of several megabytes made by the hook itself comes back exactly, whatever characters
it holds and wherever they fall: ASCII text, and text whose characters take two to four bytes
in UTF-8, lone surrogates among them, across every megabyte boundary."""

from __future__ import annotations

import pytest

MB = 1 << 20

ASCII = "def main(p):\n    r = p['request']\n    r['system'] = 'abc' * 1_200_000\n    return r\n"
# Around each multiple of 2**20 characters: a 2-, 3- and 4-byte character and a lone surrogate.
MIXED = (
    "def main(p):\n"
    "    r = p['request']\n"
    "    parts = []\n"
    "    for i in range(1, 4):\n"
    "        parts.append('x' * (i * 2**20 - 3 - sum(map(len, parts))) + 'é€\\ud800👋')\n"
    "    r['system'] = ''.join(parts) + 'end'\n"
    "    return r\n"
)


def expected_mixed() -> str:
    parts: list[str] = []
    for i in range(1, 4):
        parts.append("x" * (i * MB - 3 - sum(map(len, parts))) + "é€\ud800👋")
    return "".join(parts) + "end"


@pytest.mark.parametrize(
    ("text", "system"),
    [(ASCII, lambda: "abc" * 1_200_000), (MIXED, expected_mixed)],
    ids=["ascii", "mixed"],
)
def test_a_large_result_made_by_the_hook_comes_back_exactly(workspace, runner, text, system):
    (workspace.root / "lib" / "big.py").write_text(text, encoding="utf-8")
    outcome = runner.run("basic", hook="lib/big.py")
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.result["system"] == system()
    assert outcome.result["messages"] == outcome.input["messages"]
