"""A workspace: the agent config, the studio's own settings file, hook sources, samples.

:class:`Workspace` is a folder (``agent.json``, ``hookstudio.json``, hook sources, ``samples/``,
the studio's state in ``.hookstudio/``); :meth:`Workspace.open` given an ``.adf`` agent file
returns an :class:`~studio.core.workspace.adf_workspace.AdfWorkspace`, which answers the same
questions from the database. Callers (editor, runner, records, CLI) use only this API:

- ``root``: the folder of samples, settings and records (for an ``.adf``, the state folder beside
  it); ``location``: what the user opened; ``source_root``: where the runtimes read hook sources,
  after ``sync_sources()``;
- ``agent_document()`` and ``hook_document()`` (the config, and its editable document whose
  ``save_config`` is the one way a hook edit is saved); ``settings()``; ``samples()``/``sample()``;
- ``hook_sources()``, ``source_files()``, ``read_source()``, ``write_source()``;
- ``read_only_reason`` and ``open_elsewhere`` (an ``.adf`` of an unknown schema, or one that looks
  open in ADF).

Every file here may be malformed; each reader returns the problem with the file and the JSON
path instead of raising. Only ``write_source`` writes a hook source file.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from studio.core.file_reads import read_bytes, read_text
from studio.core.findings import Finding
from studio.core.json.files import (
    JsonFileError,
    json_file_bytes,
    parse_json_bytes,
    read_json_file,
)
from studio.core.pre_llm.config import loop_name_problem
from studio.core.workspace.adf_file import SourceWrite
from studio.core.workspace.file_stamps import FileStamp, settled_stamp

if TYPE_CHECKING:
    from studio.core.workspace.agent_document import AgentDocument

AGENT_FILE = "agent.json"
STUDIO_FILE = "hookstudio.json"
SAMPLES_DIR = "samples"
STATE_DIR = ".hookstudio"
SKIPPED_DIRS = {STATE_DIR, ".git", "__pycache__", ".venv", "node_modules"}
_ABSENT: Any = object()
"""What :meth:`Workspace._read_if_present` gives for a file that is not there."""


class WorkspaceFileError(Exception):
    """A workspace file that cannot be used; ``findings`` say where and why."""

    def __init__(self, file: str, findings: list[Finding]) -> None:
        super().__init__(
            f"{file}: " + "; ".join(f"{f.pointer or '/'}: {f.message}" for f in findings)
        )
        self.file = file
        self.findings = findings


class LimitsSettings(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    memory_mb: int = Field(1024, ge=16, le=1 << 20, strict=True)
    output_kb: int = Field(1024, ge=1, le=1 << 20, strict=True)
    result_mb: int = Field(256, ge=1, le=1 << 14, strict=True)


class SandboxSettings(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    enabled: bool = Field(True, strict=True)
    network: bool = Field(False, strict=True)


class StudioSettings(BaseModel):
    """``hookstudio.json``: what the studio needs that the agent config does not say."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    version: Literal[1] = 1
    loops: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    pass_env: list[str] = Field(default_factory=list)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    # The sections the contracts own (``step``, ``chain``), each as its contract parsed it.
    _sections: dict[str, Any] = PrivateAttr(default_factory=dict)

    def section(self, key: str) -> Any:
        """A contract's section of the file, as its contract parsed it; None when absent."""
        return self._sections.get(key)

    @field_validator("version", mode="before")
    @classmethod
    def _version_is_a_number(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("version must be the number 1, not a boolean")
        return value


def env_name_problem(name: str) -> str | None:
    """Why no process can be given a variable of this name (``execve`` refuses it), or None."""
    if not name:
        return "an environment variable name cannot be empty"
    if "=" in name:
        return "an environment variable name cannot contain '='"
    if "\0" in name:
        return "an environment variable name cannot contain a NUL character"
    return None


def environment_findings(settings: StudioSettings) -> list[Finding]:
    """The ``env`` and ``pass_env`` entries no hook process could be started with."""
    found = []
    for name, value in settings.env.items():
        problem = env_name_problem(name)
        if problem is None and "\0" in value:
            problem = "an environment variable value cannot contain a NUL character"
        if problem:
            found.append(Finding(("env", name), problem, "studio.settings"))
    found += [
        Finding(("pass_env", i), problem, "studio.settings")
        for i, name in enumerate(settings.pass_env)
        if (problem := env_name_problem(name))
    ]
    return found


def pydantic_findings(exc: ValidationError, rule: str = "studio.settings") -> list[Finding]:
    return [Finding(tuple(error["loc"]), error["msg"], rule) for error in exc.errors()]


@dataclass(frozen=True)
class SampleFile:
    name: str
    path: Path


@dataclass(frozen=True)
class Sample:
    name: str
    contract: str
    document: dict[str, Any]
    path: Path = field(compare=False)


@dataclass(frozen=True)
class SourceFile:
    """A hook source and what may be done with it: ``protection`` (``read_only``, ``no_delete``,
    ``none``) and ``authorized`` come from an ``.adf``'s ``adf_files``; a folder's sources are
    ``none``, authorized when ``hookstudio.json``'s ``adf.authorized`` lists them."""

    path: str
    protection: str = "none"
    authorized: bool = False
    mime_type: str | None = None
    size: int | None = None

    @property
    def read_only(self) -> bool:
        return self.protection == "read_only"


@dataclass(frozen=True)
class Workspace:
    root: Path
    kind: ClassVar[str] = "folder"
    # Parsed files by path with their stamp and content digest: a file whose stamp is unchanged
    # (and whose last write is not too recent to tell) is not read again, and one whose bytes
    # are unchanged is not parsed again. Callers must not mutate what they get.
    _parsed: dict[Path, tuple[FileStamp | None, bytes, Any]] = field(
        default_factory=dict, compare=False, repr=False
    )

    # The settings checked from the parsed ``hookstudio.json`` they came from: the same parsed
    # document (the file unchanged) gives the same settings, checked once.
    _checked: dict[str, tuple[Any, StudioSettings]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def _read(self, path: Path) -> Any:
        try:
            info = os.stat(path)
        except OSError:
            return read_json_file(path)
        return self._read_version(path, info)

    def _read_version(self, path: Path, info: os.stat_result) -> Any:
        """The parsed file whose ``stat`` is ``info``, read again only when it changed."""
        stamp = settled_stamp(info)
        cached = self._parsed.get(path)
        if stamp is not None and cached is not None and cached[0] == stamp:
            return cached[2]
        # A new stamp, or none that can be trusted yet: the bytes tell whether it changed.
        data = json_file_bytes(path)
        digest = hashlib.blake2b(data, digest_size=16).digest()
        if cached is not None and cached[1] == digest:
            value = cached[2]
        else:
            value = parse_json_bytes(data, str(path))
        self._parsed[path] = (stamp, digest, value)
        return value

    def _read_if_present(self, path: Path) -> Any:
        """:meth:`_read`, or ``_ABSENT`` when nothing is at ``path`` (as ``Path.exists`` says)."""
        try:
            info = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return _ABSENT
        except OSError:
            if not path.exists():
                return _ABSENT
            return read_json_file(path)
        return self._read_version(path, info)

    @classmethod
    def open(cls, path: str | Path) -> Workspace:
        """A folder, or an ``.adf`` agent file (any file: one that is not an agent is refused).

        Raises ``FileNotFoundError`` when nothing is there and
        :class:`~studio.core.workspace.adf_file.AdfFileError` for a file that is not a usable
        agent (the file is left untouched)."""
        root = Path(path)
        if root.is_file():
            from studio.core.workspace.adf_workspace import AdfWorkspace

            return AdfWorkspace.open_file(root)
        if not root.is_dir():
            raise FileNotFoundError(f"{path}: no such workspace folder or .adf file")
        return cls(Path(os.path.realpath(root)))

    @property
    def location(self) -> Path:
        """What was opened: the folder, or the ``.adf`` file."""
        return self.root

    @property
    def agent_label(self) -> str:
        """How messages name where the agent config lives."""
        return AGENT_FILE

    @property
    def source_root(self) -> Path:
        """The folder the runtimes resolve hook source paths in."""
        return self.root

    @property
    def read_only_reason(self) -> str | None:
        """Why nothing of the agent may be written, or None (a folder is always writable)."""
        return None

    @property
    def open_elsewhere(self) -> bool:
        """Whether the agent looked open in another program when the workspace was opened."""
        return False

    def notice(self) -> str | None:
        """What the user must know before editing, for a banner: why nothing may be saved, or
        that the agent looks open in ADF; None when nothing stands in the way."""
        return None

    def looks_open(self) -> bool:
        """Whether another program has the agent open now (for an ``.adf``: ``-wal``/``-shm``
        beside it, so a config save would be refused)."""
        return False

    def hook_document(self) -> AgentDocument:
        """The editable agent config; its ``save_config`` saves a hook edit."""
        from studio.core.workspace.agent_document import AgentDocument

        return AgentDocument.load(self.agent_path)

    def missing_source(self, path: str) -> str | None:
        """Why the runtime would not find the hook source ``path`` where the agent keeps its
        files, or None; a folder's sources are checked when the runner resolves them."""
        return None

    copies_sources = False
    """Whether :meth:`sync_sources` does any work (reads and writes files) before a run."""

    def sync_sources(self) -> Path:
        """Make :attr:`source_root` hold the current hook sources; a folder already does."""
        return self.source_root

    def source_files(self, extensions: tuple[str, ...]) -> list[SourceFile]:
        """:meth:`hook_sources` with each one's protection and authorized state."""
        try:
            section = self.settings().section("adf")
        except WorkspaceFileError:
            section = None
        authorized = set(getattr(section, "authorized", ()))
        return [SourceFile(p, authorized=p in authorized) for p in self.hook_sources(extensions)]

    def read_source(self, path: str) -> str:
        """A hook source's text. Raises :class:`WorkspaceFileError` when it cannot be read."""
        from studio.core.source_ref import SourceOutsideWorkspace, resolve_source_path

        try:
            return read_text(resolve_source_path(self.source_root, path))
        except (OSError, UnicodeDecodeError, SourceOutsideWorkspace) as exc:
            raise WorkspaceFileError(
                path, [Finding((), f"cannot be read: {exc}", "workspace.source")]
            ) from None

    def write_source(self, path: str, text: str, *, deauthorize: bool = False) -> SourceWrite:
        """Write a hook source (UTF-8, atomically). ``deauthorize`` matters only for an
        ``.adf``, where an edit removes a file's authorization."""
        from studio.core.source_ref import resolve_source_path
        from studio.core.workspace.atomic_write import write_atomically

        target = resolve_source_path(self.source_root, path)
        data = text.encode("utf-8")
        try:
            if read_bytes(target) == data:
                return SourceWrite("unchanged", path)
        except OSError:
            pass
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(target, data)
        return SourceWrite("saved", path)

    @property
    def agent_path(self) -> Path:
        return self.root / AGENT_FILE

    @property
    def settings_path(self) -> Path:
        return self.root / STUDIO_FILE

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    def agent_document(self) -> object:
        """The agent config document; a missing file is an empty config (no hook).

        Whatever JSON value the file holds: :func:`check_agent_config` says when it is not an
        object."""
        try:
            document = self._read_if_present(self.agent_path)
        except JsonFileError as exc:
            raise WorkspaceFileError(
                AGENT_FILE, [Finding((), str(exc), "workspace.json")]
            ) from None
        return {} if document is _ABSENT else document

    def settings(self) -> StudioSettings:
        """The checked ``hookstudio.json``; callers must not change what they get."""
        try:
            raw = self._read_if_present(self.settings_path)
        except JsonFileError as exc:
            raise WorkspaceFileError(
                STUDIO_FILE, [Finding((), str(exc), "workspace.json")]
            ) from None
        checked = self._checked.get(STUDIO_FILE)
        if checked is not None and checked[0] is raw:
            return checked[1]
        settings = StudioSettings() if raw is _ABSENT else self._checked_settings(raw)
        # Holding ``raw`` keeps it alive, so no other document can take its identity.
        self._checked[STUDIO_FILE] = (raw, settings)
        return settings

    def _checked_settings(self, raw: Any) -> StudioSettings:
        from studio.core.registry import CONTRACTS

        owners = {c.settings_key: c for c in CONTRACTS.values() if c.settings_key is not None}
        own = {k: v for k, v in raw.items() if k not in owners} if isinstance(raw, dict) else raw
        found: list[Finding] = []
        try:
            settings = StudioSettings.model_validate(own)
        except ValidationError as exc:
            found = pydantic_findings(exc)
        sections: dict[str, Any] = {}
        for key, contract in owners.items():
            if isinstance(raw, dict) and key in raw:
                section = contract.parse_settings(raw[key])
                if isinstance(section, list):
                    found += [f.under((key,)) for f in section]
                else:
                    sections[key] = section
        if found:
            raise WorkspaceFileError(STUDIO_FILE, found)
        settings._sections.update(sections)
        bad = [
            Finding(("loops", i), problem, "studio.settings")
            for i, name in enumerate(settings.loops)
            if (problem := loop_name_problem(name))
        ]
        bad += environment_findings(settings)
        if bad:
            raise WorkspaceFileError(STUDIO_FILE, bad)
        return settings

    def samples(self) -> list[SampleFile]:
        folder = self.root / SAMPLES_DIR
        if not folder.is_dir():
            return []
        # By name, as a user reads them: "a" before "a-b" (file names would put "a-b.json" first).
        found = sorted(folder.glob("*.json"), key=lambda p: p.stem)
        return [SampleFile(p.stem, p) for p in found if p.is_file()]

    def sample(self, name: str) -> Sample:
        label = f"{SAMPLES_DIR}/{name}.json"
        path = self.root / SAMPLES_DIR / f"{name}.json"
        info = None
        if not ("/" in name or "\\" in name or name.startswith(".")):
            with contextlib.suppress(OSError, ValueError):
                info = os.stat(path)
        if info is None or not stat.S_ISREG(info.st_mode):
            known = ", ".join(s.name for s in self.samples()) or "none"
            raise WorkspaceFileError(
                label,
                [Finding((), f"no sample named '{name}' (samples: {known})", "workspace.sample")],
            )
        try:
            document = self._read_version(path, info)
        except JsonFileError as exc:
            raise WorkspaceFileError(label, [Finding((), str(exc), "workspace.json")]) from None
        return self._sample_of(name, label, path, document)

    def given_sample(self, name: str, document: Any) -> Sample:
        """A sample whose document is given rather than read (a stored run made again on what
        it was given), checked as a sample file is; ``name`` is the sample it came from."""
        label = f"{SAMPLES_DIR}/{name}.json (as a stored run was given it)"
        return self._sample_of(name, label, self.root / SAMPLES_DIR / f"{name}.json", document)

    def _sample_of(self, name: str, label: str, path: Path, document: Any) -> Sample:
        if not isinstance(document, dict):
            raise WorkspaceFileError(
                label, [Finding((), "a sample must be a JSON object", "workspace.sample")]
            )
        from studio.core.registry import CONTRACTS, DEFAULT_CONTRACT, contract_names_phrase

        contract = document.get("contract", DEFAULT_CONTRACT)
        if not isinstance(contract, str) or contract not in CONTRACTS:
            raise WorkspaceFileError(
                label,
                [
                    Finding(
                        ("contract",),
                        f"contract must be {contract_names_phrase()}, got {contract!r}",
                        "workspace.sample",
                    )
                ],
            )
        return Sample(name, contract, document, path)

    def hook_sources(self, extensions: tuple[str, ...]) -> list[str]:
        """The workspace's files that end with one of ``extensions`` (the languages the studio
        runs), relative, skipping the studio's own and tool folders."""
        found: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(
                d for d in dirnames if d not in SKIPPED_DIRS and not d.startswith(".")
            )
            for filename in sorted(filenames):
                if filename.endswith(extensions):
                    found.append(os.path.relpath(os.path.join(dirpath, filename), self.root))
        return found
