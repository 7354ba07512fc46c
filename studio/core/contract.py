"""The Contract interface: what the studio needs to know about one hook contract.

A contract parses its samples (a typed sample, or findings with JSON paths), names the schemas
of its files, offers a template for a new sample and an outline of a sample for the structured
view, and runs a sample: it plans each hook call (which hook, which input, which deadline),
hands the call to ``call_hook`` (the engine runs it in a fresh worker through the runtime of the
source's language) and judges each reply into a result or a turn error, the decision record
and, where it has one, the effective change.

Nothing here knows how a hook runs, and nothing in the engine knows a contract: the runner
asks the contract to run and lends it :data:`CallHook`. The contracts are listed in
:mod:`studio.core.registry`.
"""

from __future__ import annotations

import argparse
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from studio.core.findings import Finding, errors
from studio.core.json.outline import Entry, json_entries
from studio.core.turn_error import HookRef, TurnError, turn_error

if TYPE_CHECKING:
    from studio.core.run_outcome import RunOutcome
    from studio.core.workspace.folder import Sample, StudioSettings, Workspace

HookApi = Literal["adf", "step"]
"""What the host lends a hook besides its argument: ``adf`` is the pre-LLM module global
``adf`` (``sys_lambda``), ``step`` the step context's resource reads."""

ResultView = Literal["request", "amendment", "timeline", "layers"]
"""How the interface shows a contract's result: a request diffed against the input, an
amendment beside its effective change, a timeline of hooks, or layers of decisions (each an
amendment beside what it produced, and its record) as :meth:`Contract.layers` lists them."""


@dataclass(frozen=True)
class Layer:
    """One decision of a layered run, as the interface lists it: what was asked (``asked``),
    what it produced (``produced``), its record when one is kept, and how it ended."""

    name: str
    """``invocation``, ``step 0 (initial)``."""
    status: str
    """``accepted``, ``failed: <rule or reason>``, ``not run``."""
    asked: Any
    produced: Any
    record: Any = None
    asked_title: str = "Amendment (what the hook returned)"
    produced_title: str = "Effective change (the studio's view)"
    record_title: str = "Decision record, exactly as recorded"
    record_note: str = ""
    links: tuple[str | None, str | None] = (None, None)
    """(the request sealed before it, the request it sealed), as the reference links them."""
    failed: bool = False


@dataclass(frozen=True)
class HookCall:
    """One call of a user's hook: which hook, with which input, by when."""

    source: str
    """``path[:function]`` as configured; the runner resolves it inside the workspace."""
    hook: HookRef
    argument: Any = None
    encoded: bytes | None = None
    """The argument already as JSON bytes (a sample run again is encoded once)."""
    echo: bytes | memoryview | None = None
    """The JSON text of what the hook returns when it changes nothing (a pre-LLM hook's
    request, as sent). A runtime that gets back exactly this text need not read it again; it
    says so with :attr:`HookReply.echoed`."""
    echo_members: Mapping[str, tuple[str, Any]] | None = None
    """The members of that returned object when it changes some of them: key -> (the member's
    JSON text as the hook writes it, its value). A runtime may give a returned object, for
    each member whose text is exactly this, this very value instead of reading it again."""
    timeout_ms: float = 30_000
    loop: str | None = None
    api: HookApi | None = None
    options: dict[str, Any] = field(default_factory=dict)


class OutputFields(TypedDict):
    """The :class:`RunOutcome` fields of one worker: what it printed and which hook it ran."""

    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    hook: HookRef


@dataclass
class HookReply:
    """What came back from one hook call: the returned JSON value (None when the hook returned
    None) or the turn error that ended it, and what the worker printed."""

    value: Any = None
    error: TurnError | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    duration_ms: float = 0.0
    warnings: list[dict[str, str]] = field(default_factory=list)
    """What the runtime noticed about the call without failing it (``path``, ``message``), as
    :attr:`RunOutcome.warnings` holds them."""
    echoed: bool = False
    """The hook returned exactly :attr:`HookCall.echo`: :attr:`value` was left unread (None),
    since the caller holds that value already."""

    def output_fields(self, hook: HookRef) -> OutputFields:
        """The RunOutcome fields that say what the worker printed and which hook it ran."""
        return {
            "stdout": self.stdout,
            "stderr": self.stderr,
            "stdout_truncated": self.stdout_truncated,
            "stderr_truncated": self.stderr_truncated,
            "hook": hook,
        }


CallHook = Callable[[HookCall], Awaitable[HookReply]]


@dataclass(frozen=True)
class RunJob:
    """One run the user asked for: a sample of this contract, read and parsed once."""

    workspace: Workspace
    settings: StudioSettings
    sample: Sample
    parsed: Any
    """What :meth:`Contract.parse_sample` made of the sample."""
    loop: str | None = None
    hook: str | None = None
    """A ``path[:function]`` to run instead of the configured hook."""
    hook_config: dict[str, Any] | None = None
    """An unsaved edit of the configured hook, run instead of the saved one."""
    in_pieces: bool = False
    """Large JSON is hashed and written in pieces, so a thread sharing the process runs too."""
    is_cancelled: Callable[[], bool] = lambda: False


class RunStopped(Exception):
    """A run that ended before (or instead of) judging a reply; carries the turn error."""

    def __init__(self, error: TurnError) -> None:
        super().__init__(error.message)
        self.error = error


class SourceUnavailable(RunStopped):
    """The hook's source cannot be run at all: outside the workspace, missing, or in a language
    no runtime runs. A contract that calls several hooks may fail just that one."""


class CheckUsageError(ValueError):
    """An argument a headless check cannot use; the CLI says so and exits 2."""


@dataclass(frozen=True)
class HeadlessCheck:
    """A ``hook-studio check-*`` command: it reads files named by its arguments and answers
    one JSON object and whether the checked file is valid.

    ``configure`` names the checked document with exactly one positional argument: the CLI adds
    ``--batch``, which checks each line of stdin in its place through the same ``check``."""

    name: str
    summary: str
    configure: Callable[[argparse.ArgumentParser], None]
    check: Callable[[argparse.Namespace, Callable[[str], Any]], tuple[dict[str, Any], bool]]
    """(arguments, read_json) -> (the JSON answer, valid)."""
    flag: str | None = None
    """A check of another contract's command (``check-amendment --invocation``): the option
    that picks it. The command's check without a flag answers when no flag is given."""


def merged_checks(checks: list[HeadlessCheck]) -> list[HeadlessCheck]:
    """One check per command name: the checks that share a name become one command whose
    options (each check's ``flag``) pick which of them answers."""
    by_name: dict[str, list[HeadlessCheck]] = {}
    for check in checks:
        by_name.setdefault(check.name, []).append(check)
    return [group[0] if len(group) == 1 else _one_command(group) for group in by_name.values()]


def _one_command(group: list[HeadlessCheck]) -> HeadlessCheck:
    plain = [check for check in group if check.flag is None]
    if len(plain) != 1:
        raise ValueError(f"{group[0].name}: one check answers without a flag, and only one")
    default = plain[0]
    variants = {check.flag: check for check in group if check.flag is not None}

    def configure(p: argparse.ArgumentParser) -> None:
        default.configure(p)
        options = p.add_mutually_exclusive_group()
        for flag, check in variants.items():
            options.add_argument(flag, action="store_true", help=check.summary)

    def chosen(args: argparse.Namespace) -> HeadlessCheck:
        for flag, check in variants.items():
            if getattr(args, flag.lstrip("-").replace("-", "_"), False):
                return check
        return default

    return HeadlessCheck(
        default.name,
        default.summary + "".join(f"; {flag}: {c.summary}" for flag, c in variants.items()),
        configure,
        lambda args, read: chosen(args).check(args, read),
    )


class Contract(ABC):
    """One hook contract. Subclasses are stateless; the registry holds one of each."""

    name: str
    """The word in sample files, records and the CLI (``"pre_llm"``)."""
    label: str
    """What users call it (``"pre-LLM hook"``)."""
    title: str
    """The label as a title (``"Pre-LLM hook"``)."""
    result_view: ResultView
    sample_schema: str
    """The name of its sample's schema in :func:`schemas`."""
    agent_hook_key: str | None = None
    """The agent config key of the hook it runs, when the agent config holds it
    (``"pre_llm_hook"``): the window's hook editor edits that key, and an unsaved edit of it
    runs in place of the saved one (:attr:`RunJob.hook_config`)."""
    new_sample_stem: str
    """The file name (without ``.json``) of a new sample made from :meth:`sample_template`."""
    settings_key: str | None = None
    """Its section of the studio settings (``hookstudio.json``), when its hooks are set there."""
    runs_per_loop: bool = False
    """Whether its hook runs differently on each loop (Main, each inner loop), so that a sample
    is tested on every loop; otherwise a sample runs once."""

    @abstractmethod
    def parse_sample(self, document: Any) -> Any | list[Finding]:
        """The typed sample, or every finding (errors first by the runner's order) with its
        JSON path; warnings alone still give a typed sample."""

    def sample_findings(self, document: Any) -> list[Finding]:
        """Every finding of a sample document: errors and warnings, as the runner sees them."""
        parsed = self.parse_sample(document)
        if isinstance(parsed, list):
            return parsed
        return list(getattr(parsed, "warnings", ()))

    @abstractmethod
    def sample_template(self) -> dict[str, Any]:
        """A minimal valid sample, for a new file."""

    def outline(self, document: dict[str, Any]) -> list[Entry]:
        """The top rows of the structured view of a sample; deeper rows come when opened."""
        return json_entries(document, "")

    @abstractmethod
    def schemas(self) -> dict[str, dict[str, Any]]:
        """The JSON Schemas of this contract's files, by name."""

    def parse_settings(self, value: Any) -> Any | list[Finding]:
        """Its section of the studio settings as it is checked when the file is read: the typed
        section, or findings with paths inside the section. Only with :attr:`settings_key`."""
        return value

    def settings_schema(self) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """The schema of its settings section, and the definitions that schema refers to."""
        return {}, {}

    def checks(self) -> list[HeadlessCheck]:
        """Its ``hook-studio check-*`` commands."""
        return []

    @abstractmethod
    async def run(self, job: RunJob, call_hook: CallHook) -> RunOutcome:
        """Plan the hook calls of ``job``, make them through ``call_hook``, judge the replies.
        May raise :class:`RunStopped` for a failure before any hook was called."""

    def tool_names(self, outcome: RunOutcome) -> tuple[list[str], list[str]] | None:
        """The tools before the hook and after it, by name, when its result says; None when
        this contract's result has no tool list."""
        return None

    def subject(self, outcome: RunOutcome) -> str | None:
        """What ran, when it is not one hook (``"chain of 4 hooks"``)."""
        return None

    def describe(self, outcome: RunOutcome) -> list[str]:
        """Lines of ``hook-studio run``'s text report that only this contract has."""
        return []

    def layers(self, outcome: RunOutcome) -> list[Layer]:
        """The decisions of a run in the order they were made, for the ``layers`` view."""
        return []


def tool_list_names(tools: Any) -> list[str] | None:
    """The names of a request's tools (objects with a string ``name``, or bare names); None
    when ``tools`` is not such a list."""
    if not isinstance(tools, list):
        return None
    names = []
    for tool in tools:
        name = tool.get("name") if isinstance(tool, dict) else tool
        if not isinstance(name, str):
            return None
        names.append(name)
    return names


def sample_error(sample: Sample, findings: list[Finding]) -> TurnError:
    """The ``sample_invalid`` turn error of a sample with error findings."""
    found = errors(findings)
    first = found[0]
    return turn_error(
        "sample_invalid",
        f"samples/{sample.name}.json {first.pointer or '/'}: {first.message}",
        path=first.pointer,
        details={"findings": [f.to_json() for f in found[:50]]},
    )


def config_error(file: str, findings: list[Finding], **fields: Any) -> TurnError:
    """The ``config_invalid`` turn error of a config file with error findings."""
    found = errors(findings)
    first = found[0]
    return turn_error(
        "config_invalid",
        f"{file} {first.pointer}: {first.message}",
        path=first.pointer,
        details={"findings": [f.to_json() for f in found]},
        **fields,
    )
