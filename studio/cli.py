"""The command line: the studio window by default, and headless subcommands.

Every check prints one JSON object on stdout and exits 0 when valid, 1 when invalid, and 2 when
its file cannot be read or is not JSON (with the reason on stderr). With ``--batch`` a check reads
JSON Lines on stdin instead of its file and answers each line as it comes, one line of JSON each.
"""

from __future__ import annotations

import argparse
import functools
import io
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from studio.core.json.deep import deep_json

EXIT_VALID = 0
EXIT_INVALID = 1
EXIT_UNREADABLE = 2


class UsageError(Exception):
    """A problem with how the command was called or with its input file."""


def _emit(result: dict[str, Any]) -> None:
    with deep_json():  # a hook's result may be nested as deep as the runtimes take it
        text = json.dumps(result, allow_nan=False)
    sys.stdout.write(text + "\n")


def _read(path: str) -> Any:
    """A JSON file; for an ``.adf`` agent file, its agent config."""
    from studio.core.json.files import JsonFileError, read_json_file

    if path.endswith(".adf") and Path(path).is_file():
        from studio.core.workspace.adf_file import AdfFile, AdfFileError

        try:
            return AdfFile.open(path).config()
        except AdfFileError as exc:
            raise UsageError(str(exc)) from None
    try:
        return read_json_file(path, waits=True)
    except JsonFileError as exc:
        raise UsageError(str(exc)) from None


# ---- headless checks: one file, or a batch of JSON Lines on stdin -----------------------------

BATCH_HELP = (
    "check JSON Lines on stdin instead of a file: one document per line, one JSON result per line "
    'on stdout, in order, each with its "line" number (1-based)'
)
NOT_JSON_RULE = "json"
"""The rule of a batch line that holds no JSON document."""


def _check_arguments(
    configure: Callable[[argparse.ArgumentParser], None],
) -> Callable[[argparse.ArgumentParser], None]:
    """A check's own arguments, with ``--batch`` in place of its one positional document."""

    def with_batch(p: argparse.ArgumentParser) -> None:
        configure(p)
        positionals = [action for action in p._actions if not action.option_strings]
        if len(positionals) != 1:
            raise ValueError(f"{p.prog}: a check names its document with one positional argument")
        document = positionals[0]
        document.nargs = "?"
        document.required = False
        document.help = f"{document.help}; not with --batch"
        p.add_argument("--batch", action="store_true", help=BATCH_HELP)
        p.set_defaults(document_argument=document.dest)

    return with_batch


def _headless_check(check: Any) -> Callable[[argparse.Namespace], int]:
    """A ``check-*`` command of a contract: its JSON answer on stdout, 0 valid, 1 invalid."""

    def handler(args: argparse.Namespace) -> int:
        dest = args.document_argument
        named = getattr(args, dest)
        if args.batch:
            if named is not None:
                raise UsageError(f"--batch reads the documents on stdin: give no {dest} as well")
            return _check_batch(check, args, dest)
        if named is None:
            raise UsageError(f"{check.name}: give the {dest} to check, or --batch to read stdin")
        result, valid = _answer(check, args, _read)
        _emit(result)
        return EXIT_VALID if valid else EXIT_INVALID

    return handler


def _answer(
    check: Any, args: argparse.Namespace, read: Callable[[str], Any]
) -> tuple[dict[str, Any], bool]:
    from studio.core.contract import CheckUsageError

    try:
        result, valid = check.check(args, read)
    except CheckUsageError as exc:
        raise UsageError(str(exc)) from None
    return result, bool(valid)


class _BatchLine(str):
    """What a check reads as its document's name in a batch (``stdin line 3``); reading it gives
    the line's document. A str, so that a check that names its file in a message still can."""

    document: Any

    def __new__(cls, origin: str, document: Any) -> _BatchLine:
        line = super().__new__(cls, origin)
        line.document = document
        return line


def _check_batch(check: Any, args: argparse.Namespace, dest: str) -> int:
    """Each line of stdin checked as the check's document, each answer written before the next
    line is read, so that a batch of any length streams and a caller can converse line by line.
    A line that is not JSON is an invalid answer, not a stop; a usage problem stops (exit 2)."""
    from studio.core.json.files import JsonFileError

    # The other files a check names (--input) are the same for every line: read once.
    read_option_file = functools.cache(_read)

    def read(name: str) -> Any:
        return name.document if isinstance(name, _BatchLine) else read_option_file(name)

    all_valid = True
    with deep_json():  # held once for the batch, not raised and lowered for every line
        for number, raw in enumerate(sys.stdin.buffer, start=1):
            origin = f"stdin line {number}"
            try:
                document = _line_document(raw, origin)
            except JsonFileError as exc:
                result, valid = _not_json(str(exc)), False
            else:
                setattr(args, dest, _BatchLine(origin, document))
                result, valid = _answer(check, args, read)
            all_valid = all_valid and valid
            _emit({"line": number, **result})
            sys.stdout.flush()
    return EXIT_VALID if all_valid else EXIT_INVALID


def _line_document(raw: bytes, origin: str) -> Any:
    from studio.core.json.files import JsonFileError, parse_json_text

    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise JsonFileError(
            f"{origin}: not UTF-8 text (byte {exc.start} cannot be decoded)"
        ) from None
    if not text.strip(" \t\r\n"):
        raise JsonFileError(f"{origin}: empty, where one JSON document was expected")
    return parse_json_text(text, origin)


def _not_json(problem: str) -> dict[str, Any]:
    from studio.core.findings import Finding

    return {"valid": False, "errors": [Finding((), problem, NOT_JSON_RULE).to_json()]}


def _schema(args: argparse.Namespace) -> int:
    from studio.core.schemas import all_schemas

    schemas = all_schemas()
    if args.name:
        if args.name not in schemas:
            raise UsageError(f"no schema named {args.name!r}; choose one of {', '.join(schemas)}")
        _emit(schemas[args.name])
    else:
        _emit(schemas)
    return EXIT_VALID


WORKSPACE_HELP = "a workspace folder or an .adf agent file"


def _records_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("workspace", help=WORKSPACE_HELP)
    p.add_argument("--limit", type=int, metavar="N", help="only the N newest records")
    p.add_argument(
        "--jsonl",
        action="store_true",
        help="one JSON object per line: the run record, with its payload (null once cleared)",
    )


def _records(args: argparse.Namespace) -> int:
    from studio.core.records.store import (
        RecordStore,
        RecordStoreError,
        format_records_table,
        store_path,
    )

    if args.limit is not None and args.limit < 1:
        raise UsageError(f"--limit {args.limit}: must be at least 1")
    path = store_path(_workspace(args.workspace).root)
    if not path.exists():  # nothing ran here yet; reading creates nothing
        summaries = []
    else:
        try:
            with RecordStore(path, create=False) as store:
                summaries = store.list(args.limit)
                if args.jsonl:
                    store.export_jsonl([s.run_id for s in summaries], sys.stdout)
                    return EXIT_VALID
        except RecordStoreError as exc:
            raise UsageError(str(exc)) from None
    if not args.jsonl:
        lines = format_records_table(summaries) if summaries else ["no records"]
        sys.stdout.write("".join(line + "\n" for line in lines))
    return EXIT_VALID


EXIT_TURN_ERROR = 3
EXIT_CANCELLED = 128 + 2  # as a shell reports a command that SIGINT ended


def _workspace(path: str) -> Any:
    from studio.core.workspace.adf_file import AdfFileError
    from studio.core.workspace.folder import Workspace

    try:
        workspace = Workspace.open(path)
    except (FileNotFoundError, AdfFileError) as exc:
        raise UsageError(str(exc)) from None
    notice = workspace.notice()
    if notice:
        print(f"hook-studio: {notice}", file=sys.stderr)
    return workspace


def _known_sample(workspace: Any, name: str) -> None:
    names = [s.name for s in workspace.samples()]
    if name not in names:
        raise UsageError(
            f"no sample named {name!r} in {workspace.root} (samples: {', '.join(names) or 'none'})"
        )


def _follow_node_settings() -> None:
    """Run TypeScript and JavaScript hooks on the Node chosen in the studio's settings, as the
    window does (``HOOK_STUDIO_NODE`` still overrides it)."""
    from studio.core.app_settings import load_settings
    from studio.engine.node_binary import use_node_setting
    from studio.ui.app import settings_file

    use_node_setting(load_settings(settings_file()).node)


def _run(args: argparse.Namespace) -> int:
    import asyncio

    from studio.core.run_report import describe_outcome
    from studio.engine.runner import Runner

    workspace = _workspace(args.workspace)
    _known_sample(workspace, args.sample)
    _provider_applies(workspace, args)
    _follow_node_settings()

    async def go() -> Any:
        store, problem = _open_store(workspace)
        runner = Runner(workspace, store=store)
        try:
            handle = runner.start(args.sample, loop=args.loop, hook=args.hook)
            outcome = await handle.outcome()
            # The report is printed once the run's record is written, or said not to be.
            problem = problem or await handle.recorded()
        finally:
            await runner.close()
            if store is not None:
                store.close()
        if problem:
            # The report is all a script reads: a run left out of the records says so there.
            warning = {"path": "", "message": f"this run was not recorded: {problem}"}
            outcome = outcome.model_copy(update={"warnings": [*outcome.warnings, warning]})
        return outcome

    outcome = asyncio.run(go())
    preview = _provider_preview(outcome, args.provider)
    if args.json:
        _emit({**outcome.to_cli_json(), **({"provider": preview.to_json()} if preview else {})})
    else:
        sys.stdout.write(describe_outcome(outcome) + (preview.text() if preview else ""))
    return EXIT_TURN_ERROR if outcome.status == "turn_error" else EXIT_VALID


EXIT_TESTS_FAILED = 1


def _test_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("workspace", help=WORKSPACE_HELP)
    p.add_argument("--junit", metavar="FILE", help="also write the results as JUnit XML to FILE")
    p.add_argument("--json", action="store_true", help="print the results as one JSON object")


def _test(args: argparse.Namespace) -> int:
    """Every sample with expectations on every target it names: 0 when all pass, 1 when any
    fails or cannot be judged, 2 for a usage or workspace problem."""
    import asyncio

    from studio.core.expectations.junit import write_junit
    from studio.core.expectations.report import report_json, summary_lines, totals
    from studio.core.expectations.targets import plan_tests
    from studio.core.workspace.folder import WorkspaceFileError
    from studio.engine.hook_tests import test_workspace

    workspace = _workspace(args.workspace)
    try:
        plans = plan_tests(workspace)
    except WorkspaceFileError as exc:
        raise UsageError(str(exc)) from None
    if not plans:
        print(
            'hook-studio: no sample has expectations (an "expect" key); nothing to test',
            file=sys.stderr,
        )
    _follow_node_settings()

    async def go() -> Any:
        store, problem = _open_store(workspace)
        if problem:
            print(f"hook-studio: the runs are not recorded: {problem}", file=sys.stderr)
        try:
            return await test_workspace(workspace, plans, store)
        finally:
            if store is not None:
                store.close()

    reports = asyncio.run(go())
    if args.junit:
        try:
            write_junit(args.junit, reports)
        except OSError as exc:
            raise UsageError(f"{args.junit}: cannot be written ({exc.strerror or exc})") from None
    if args.json:
        _emit(report_json(reports))
    else:
        sys.stdout.write("".join(line + "\n" for line in summary_lines(reports)))
    return EXIT_VALID if totals(reports).ok else EXIT_TESTS_FAILED


def _open_store(workspace: Any) -> tuple[Any, str | None]:
    """The workspace's record store, or None and why it cannot be written."""
    from studio.core.records.store import RecordStore, RecordStoreError

    try:
        return RecordStore.open(workspace.root), None
    except RecordStoreError as exc:
        return None, str(exc)


def _bench(args: argparse.Namespace) -> int:
    import asyncio

    from studio.engine.bench import bench
    from studio.engine.runner import Runner

    workspace = _workspace(args.workspace)
    _known_sample(workspace, args.sample)
    if args.n < 1 or args.concurrency < 1:
        raise UsageError("-n and --concurrency must be at least 1")
    _follow_node_settings()

    async def go() -> dict[str, Any]:
        runner = Runner(workspace)
        try:
            return await bench(
                runner,
                args.sample,
                n=args.n,
                concurrency=args.concurrency,
                loop=args.loop,
                hook=args.hook,
            )
        finally:
            await runner.close()

    figures = asyncio.run(go())
    if args.json:
        _emit(figures)
    else:
        for key, value in figures.items():
            print(f"{key:>22}  {value}")
    return EXIT_VALID


def _hook_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("workspace", help=WORKSPACE_HELP)
    p.add_argument(
        "--set",
        metavar="FILE",
        help='validate this pre_llm_hook (JSON, bare or as {"pre_llm_hook": ...} the way it '
        "is printed; '-' reads stdin, null removes the hook) and save it",
    )


def _hook(args: argparse.Namespace) -> int:
    """Print the pre-LLM hook config, or validate and save a new one by the editor's path."""
    from studio.core.findings import errors, warnings
    from studio.core.json.files import JsonFileError
    from studio.core.pre_llm.config import HOOK_KEY, SourceHome, check_agent_config
    from studio.core.workspace.adf_file import AdfFileError
    from studio.core.workspace.agent_document import ExternalChange
    from studio.core.workspace.folder import WorkspaceFileError

    workspace = _workspace(args.workspace)
    try:
        document = workspace.hook_document()
    except (JsonFileError, WorkspaceFileError) as exc:
        raise UsageError(str(exc)) from None
    if args.set is None:
        _emit({HOOK_KEY: document.hook_config} if HOOK_KEY in document.document else {})
        return EXIT_VALID
    if args.set == "-":
        text = sys.stdin.read()
        try:
            new = json.loads(text)
        except ValueError as exc:
            raise UsageError(f"stdin: not JSON: {exc}") from None
    else:
        new = _read(args.set)
    if isinstance(new, dict) and list(new) == [HOOK_KEY]:
        # The shape `hook` prints, so that its output edited can be given back as it is.
        new = new[HOOK_KEY]
    # An agent file's sources are keys of its own, judged as the runtime judges them there.
    home: SourceHome = "adf" if workspace.kind == "adf" else "folder"
    check = check_agent_config({**document.document, HOOK_KEY: new}, home)
    result: dict[str, Any] = {
        "valid": check.valid,
        "errors": [f.to_json() for f in errors(check.findings)],
        "warnings": [f.to_json() for f in warnings(check.findings)],
        # Saved all the same: the hook config is valid; the calls it applies to will fail.
        "runtime_errors": [f.to_json() for f in check.runtime_errors],
    }
    if not check.valid:
        _emit(result)
        return EXIT_INVALID
    if new is not None and not isinstance(new, dict):
        raise UsageError(f"{args.set}: a pre_llm_hook to save must be an object or null")
    try:
        if new is None:
            document.remove_hook()
        else:
            document.save_config(new)
    except (AdfFileError, JsonFileError, ExternalChange, OSError) as exc:
        raise UsageError(f"not saved: {exc}") from None
    result["saved"] = str(workspace.location)
    _emit(result)
    return EXIT_VALID


def _open_studio(args: argparse.Namespace) -> int:
    if args.workspace and not Path(args.workspace).exists():
        raise UsageError(f"{args.workspace}: no such workspace folder or .adf file")
    from studio.ui.app import run_studio

    return run_studio(args.workspace)


def _subcommands() -> dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable]]:
    def run(p: argparse.ArgumentParser) -> None:
        p.add_argument("workspace", help=WORKSPACE_HELP)
        p.add_argument("--sample", required=True, metavar="NAME", help="samples/NAME.json")
        p.add_argument("--loop", metavar="NAME", help="the loop to run on (default: the sample's)")
        p.add_argument("--hook", metavar="SOURCE", help="run this path[:function] instead")
        p.add_argument("--json", action="store_true", help="print the outcome as one JSON object")

    def bench_args(p: argparse.ArgumentParser) -> None:
        run(p)
        p.add_argument("-n", type=int, default=200, help="how many runs (default 200)")
        p.add_argument("--concurrency", type=int, default=1, metavar="C", help="runs at once")

    def run_with_provider(p: argparse.ArgumentParser) -> None:
        run(p)
        _provider_argument(p)

    def schema(p: argparse.ArgumentParser) -> None:
        p.add_argument("name", nargs="?", help="print only this schema")

    from studio.core.contract import merged_checks
    from studio.core.registry import CONTRACTS

    checks = {
        check.name: (check.summary, _check_arguments(check.configure), _headless_check(check))
        for check in merged_checks(
            [c for contract in CONTRACTS.values() for c in contract.checks()]
        )
    }
    return {
        **checks,
        "schema": ("print the JSON Schemas of the config and the studio's files", schema, _schema),
        "run": ("run a hook on a sample in a fresh worker", run_with_provider, _run),
        "bench": ("time a hook's round trip over many runs", bench_args, _bench),
        "test": (
            "run every sample's expectations on every target they name (hook tests)",
            _test_arguments,
            _test,
        ),
        "import-request": (
            "turn a captured provider request body into a pre-LLM sample",
            _import_arguments,
            _import_request,
        ),
        "records": (
            "list the stored runs of a workspace, newest first",
            _records_arguments,
            _records,
        ),
        "hook": (
            "print a workspace's pre-LLM hook config, or validate and save a new one (--set)",
            _hook_arguments,
            _hook,
        ),
        **_adf_history_commands(),
    }


# ---- provider requests: import-request, and run --provider --------------------------------


def _provider_argument(p: argparse.ArgumentParser) -> None:
    from studio.core.provider.preview import PROVIDERS

    p.add_argument(
        "--provider",
        choices=list(PROVIDERS),
        help="also show the body this provider receives after the hook, and the prompt-cache "
        "check (pre-LLM samples)",
    )


def _provider_applies(workspace: Any, args: argparse.Namespace) -> None:
    from studio.core.workspace.folder import WorkspaceFileError

    if args.provider is None:
        return
    try:
        contract = workspace.sample(args.sample).contract
    except WorkspaceFileError:
        return  # the run reports the sample's problem
    if contract != "pre_llm":
        raise UsageError(f"--provider: sample {args.sample!r} is a {contract} sample, not pre-LLM")


def _provider_preview(outcome: Any, provider: str | None) -> Any:
    from studio.core.provider.run_preview import run_preview

    return run_preview(outcome, provider) if provider else None


def _import_arguments(p: argparse.ArgumentParser) -> None:
    from studio.core.provider.formats import FORMATS

    p.add_argument("file", help="the captured request body (JSON); '-' reads stdin")
    p.add_argument("--format", choices=FORMATS, help="the body's format (default: detected)")
    p.add_argument("--into", metavar="WORKSPACE", help="save the sample in this workspace")
    p.add_argument("--name", help="the sample's name (default: the file's name)")
    p.add_argument("--force", action="store_true", help="replace a sample of the same name")
    p.add_argument(
        "--dynamic-instructions",
        action="store_true",
        help="take a final user message as options.dynamicInstructions",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="one JSON object on stdout: format, valid, incomplete, sample, losses, findings",
    )


def _import_request(args: argparse.Namespace) -> int:
    """The sample on stdout and the loss report on stderr (or one JSON object with --json);
    with --into, the sample saved. 1 when the sample does not pass the request checks."""
    from studio.core.provider.importer import ImportFailed, import_body, parse_body, save_import
    from studio.core.workspace.folder import SAMPLES_DIR
    from studio.core.workspace.sample_files import clean_sample_name, free_sample_name

    origin = "stdin" if args.file == "-" else args.file
    try:
        data = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as exc:
        raise UsageError(f"{origin}: cannot be read ({exc.strerror or exc})") from None
    try:
        imported = import_body(
            parse_body(data, origin), args.format, dynamic_instructions=args.dynamic_instructions
        )
    except ImportFailed as exc:
        raise UsageError(f"{origin}: {exc}") from None
    result = imported.to_json()
    if args.into and imported.valid:
        samples = _workspace(args.into).root / SAMPLES_DIR
        name = clean_sample_name(args.name) if args.name else ""
        if not name:
            stem = clean_sample_name(Path(args.file).name) if args.file != "-" else "imported"
            name = free_sample_name(samples, stem or "imported", [])
        try:
            saved = save_import(samples, name, imported, data, force=args.force)
        except FileExistsError:
            raise UsageError(
                f"{SAMPLES_DIR}/{name}.json exists already (--force replaces it)"
            ) from None
        except (ValueError, OSError) as exc:
            raise UsageError(f"not saved: {exc}") from None
        result["saved"] = {"sample": str(saved.sample), "original": str(saved.original)}
    if args.json:
        _emit(result)
    else:
        if not args.into:
            sys.stdout.write(imported.text())
        lines = imported.report_lines()
        if "saved" in result:
            lines.append(f"saved {result['saved']['sample']} (original body: {saved.original})")
        sys.stderr.write("".join(f"{line}\n" for line in lines))
    return EXIT_VALID if imported.valid else EXIT_INVALID


# ---- an .adf's own history and hook log: history-sample, agent-log --------------------------


def _adf_history_commands() -> dict[
    str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable]
]:
    return {
        "history-sample": (
            "build a pre-LLM sample from rows of an .adf agent's history",
            _history_sample_arguments,
            _history_sample,
        ),
        "agent-log": (
            "print an .adf agent's own pre_llm_hook log rows",
            _agent_log_arguments,
            _agent_log,
        ),
    }


def _agent_file(path: str) -> Any:
    """The workspace of an ``.adf`` agent file; a folder has no history or agent log."""
    workspace = _workspace(path)
    if workspace.kind != "adf":
        raise UsageError(f"{path}: not an .adf agent file (a folder has no agent history or log)")
    return workspace


def _history_sample_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("workspace", metavar="AGENT.adf", help="an .adf agent file")
    p.add_argument("--loop", default="main", metavar="NAME", help="the loop (default: main)")
    p.add_argument(
        "--rows",
        default=":",
        metavar="A:B",
        help="the rows by seq, both included, in the loop's order (A:, :B; default: every row)",
    )
    p.add_argument(
        "--system", required=True, metavar="TEXT", help="the system prompt (ADF never stores it)"
    )
    p.add_argument("--name", help="save the sample as samples/NAME.json in the agent's workspace")
    p.add_argument("--force", action="store_true", help="replace a sample of the same name")
    p.add_argument(
        "--json",
        action="store_true",
        help="one JSON object on stdout: loop, rows, valid, sample, losses, findings",
    )


def _history_sample(args: argparse.Namespace) -> int:
    """The sample on stdout and the loss report on stderr (or one JSON object with --json);
    with --name, the sample saved. 1 when the sample does not pass the request checks."""
    from studio.core.provider.history_sample import (
        HistorySampleError,
        build_history_sample,
        parse_row_range,
        save_history_sample,
        select_rows,
    )
    from studio.core.workspace.adf_file import AdfFileError
    from studio.core.workspace.folder import SAMPLES_DIR
    from studio.core.workspace.sample_files import clean_sample_name

    workspace = _agent_file(args.workspace)
    adf = workspace.adf
    try:
        loops = adf.loops()
        if args.loop not in loops:
            raise UsageError(
                f"{adf.path.name}: no history in loop {args.loop!r} "
                f"(loops: {', '.join(loops) or 'none'})"
            )
        rows = select_rows(adf.history(args.loop), parse_row_range(args.rows), args.loop)
        config = adf.config()
    except AdfFileError as exc:
        raise UsageError(str(exc)) from None
    except HistorySampleError as exc:
        raise UsageError(f"{adf.path.name}: {exc}") from None
    built = build_history_sample(config, args.loop, rows, args.system, origin=adf.path.name)
    result = built.to_json()
    if args.name is not None and built.valid:
        name = clean_sample_name(args.name)
        try:
            saved = save_history_sample(workspace.root / SAMPLES_DIR, name, built, force=args.force)
        except FileExistsError:
            raise UsageError(
                f"{SAMPLES_DIR}/{name}.json exists already (--force replaces it)"
            ) from None
        except (ValueError, OSError) as exc:
            raise UsageError(f"not saved: {exc}") from None
        result["saved"] = str(saved)
    if args.json:
        _emit(result)
    else:
        if args.name is None:
            sys.stdout.write(built.text())
        lines = built.report_lines()
        if "saved" in result:
            lines.append(f"saved {result['saved']}")
        sys.stderr.write("".join(f"{line}\n" for line in lines))
    return EXIT_VALID if built.valid else EXIT_INVALID


def _agent_log_arguments(p: argparse.ArgumentParser) -> None:
    from studio.core.workspace.agent_log import LEVELS

    p.add_argument("workspace", metavar="AGENT.adf", help="an .adf agent file")
    p.add_argument("--level", choices=LEVELS, help="only rows of this level")
    p.add_argument("--filter", default="", metavar="TEXT", help="only rows holding every word")
    p.add_argument("--limit", type=int, metavar="N", help="only the newest N rows")
    p.add_argument("--json", action="store_true", help="one JSON object: file and rows")


def _agent_log(args: argparse.Namespace) -> int:
    """The agent's pre_llm_hook and pre_llm_hook_error rows, oldest first."""
    from studio.core.workspace.adf_file import AdfFileError
    from studio.core.workspace.agent_log import log_json, log_lines, matches

    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit must be 1 or more")
    workspace = _agent_file(args.workspace)
    try:
        rows = workspace.adf.hook_logs()
    except AdfFileError as exc:
        raise UsageError(str(exc)) from None
    rows = [row for row in rows if matches(row, args.filter, args.level)]
    if args.limit is not None:
        rows = rows[-args.limit :]
    if args.json:
        _emit({"file": str(workspace.location), "rows": [log_json(row) for row in rows]})
    else:
        lines = log_lines(rows) or ["no pre_llm_hook rows in the agent's log"]
        sys.stdout.write("".join(line + "\n" for line in lines))
    return EXIT_VALID


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hook-studio",
        description="Edit, run and debug LLM request hooks. Without a command, opens the studio.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (summary, configure, handler) in _subcommands().items():
        sub = commands.add_parser(name, help=summary, description=summary)
        configure(sub)
        sub.set_defaults(handler=handler)
    return parser


def _studio_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hook-studio",
        description="Open the studio on a workspace folder or an .adf agent file (the last one, "
        "or the bundled sample).",
        epilog="Commands: " + ", ".join(_subcommands()) + " (hook-studio COMMAND --help)",
    )
    parser.add_argument("workspace", nargs="?", help=WORKSPACE_HELP)
    parser.set_defaults(handler=_open_studio)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # A hook's text may hold a lone surrogate (a file name, a message, its output); it is shown
    # as its escape (\ud800) instead of ending the command with a UnicodeEncodeError.
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    is_command = bool(argv) and (argv[0] in _subcommands() or argv[0] in ("-h", "--help"))
    parser = _parser() if is_command else _studio_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    try:
        return args.handler(args)
    except UsageError as exc:
        print(f"hook-studio: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    except BrokenPipeError:
        return EXIT_UNREADABLE
    except KeyboardInterrupt:
        # asyncio.run has cancelled the run and closed its runtimes (workers ended) by now.
        print("hook-studio: cancelled", file=sys.stderr)
        return EXIT_CANCELLED
