"""The text report of a run (``hook-studio run``) lists the hook's host calls: one line per call,
indented by how deep in nested ``sys_lambda`` calls it was made, with its gate and what it came
to."""

from __future__ import annotations

from studio.core.run_outcome import CallError, HostCall, RunOutcome
from studio.core.run_report import call_lines, describe_outcome, value_preview
from studio.core.turn_error import TurnError

CALLS = [
    HostCall(method="fs_read", args={"path": "a.md"}, answered_by="sample", reply={"text": "hi"}),
    HostCall(
        method="sys_lambda",
        args={"source": "lib/rag.ts:enrich"},
        answered_by="lib/rag.ts:enrich",
        reply=[1, 2],
    ),
    HostCall(
        method="shell",
        args={"cmd": "ls"},
        gate="enabled_tools",
        error=CallError(code="NOT_FOUND", message='Tool "shell" is not available'),
        depth=1,
    ),
    HostCall(
        method="web_search",
        args={},
        error=CallError(code="NO_REPLY", message="no reply\nfor web_search"),
    ),
]


def _block(report: str) -> list[str]:
    lines = report.splitlines()
    start = lines.index("calls:")
    block = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        block.append(line)
    return block


def test_each_call_is_a_line_under_calls_indented_by_depth():
    outcome = RunOutcome(contract="pre_llm", status="ok", calls=CALLS)
    assert _block(describe_outcome(outcome)) == [
        "calls:",
        '  1. fs_read · allowed · {"text": "hi"}',
        "  2. sys_lambda · allowed · [1, 2]",
        '    3. shell · refused by enabled_tools · NOT_FOUND: Tool "shell" is not available',
        "  4. web_search · allowed · NO_REPLY: no reply for web_search",
    ]


def test_a_run_without_calls_has_no_calls_block():
    outcome = RunOutcome(contract="pre_llm", status="ok")
    assert "calls" not in describe_outcome(outcome)
    assert call_lines([]) == []


def test_a_failed_run_lists_its_calls_before_the_output():
    error = TurnError(kind="exception", reason="callback", message="boom")
    outcome = RunOutcome(
        contract="pre_llm",
        status="turn_error",
        turn_error=error,
        calls=CALLS[2:3],
        stdout="printed\n",
    )
    report = describe_outcome(outcome)
    assert report.index("calls:") < report.index("--- stdout")
    assert '    1. shell · refused by enabled_tools · NOT_FOUND: Tool "shell"' in report


def test_a_long_reply_is_cut_to_one_line():
    reply = {"text": "line\n" * 10_000}
    (_, line) = call_lines([HostCall(method="fs_read", reply=reply)])
    assert "\n" not in line
    assert line.endswith("…")
    assert len(line) < 200


def test_a_huge_value_previews_as_its_first_characters():
    huge = list(range(2_000_000))
    text = value_preview(huge, 40)
    assert text.startswith("[0, 1, 2, 3")
    assert len(text) == 40


def test_the_preview_of_a_value_that_holds_itself_does_not_fail():
    looped: list[object] = []
    looped.append(looped)
    assert value_preview(looped) == "[[...]]"


def test_a_hook_calling_in_a_loop_gets_the_first_calls_and_a_count_of_the_rest():
    calls = [HostCall(method="fs_read", reply=n) for n in range(205)]
    lines = call_lines(calls)
    assert len(lines) == 1 + 200 + 1
    assert lines[200] == "  200. fs_read · allowed · 199"
    assert lines[-1] == "  … and 5 more (--json lists every call)"


def test_an_error_without_its_message_is_its_code():
    call = HostCall(
        method="shell", gate="enabled_tools", error=CallError(code="NOT_FOUND", message="")
    )
    assert call_lines([call])[1] == "  1. shell · refused by enabled_tools · NOT_FOUND"
