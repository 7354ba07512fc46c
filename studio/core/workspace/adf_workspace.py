"""An ``.adf`` agent file as a workspace (spec/adf-file.md).

The agent config comes from ``adf_config`` row 1 and the hook sources from ``adf_files``; the
studio's own state (``hookstudio.json``, ``samples/``, records, drafts) lives in a folder beside
the file, ``<name>.adf.hookstudio/``, never inside the user's database. That folder is the
workspace's :attr:`~Workspace.root`, so samples, settings and records work as for a folder.

The runtimes read hook sources from real files: before each hook call the runner asks the
workspace to :meth:`AdfWorkspace.sync_sources`, which copies every ``adf_files`` row whose content
differs from the copy into ``.hookstudio/sources/`` (read-only files; the database stays the only
place an edit goes). Which sources are authorized comes from the ``authorized`` column, as the
``adf`` section of the settings.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from studio.core.file_reads import read_bytes
from studio.core.findings import Finding
from studio.core.pre_llm.config import HOOK_KEY
from studio.core.pre_llm.host_calls import AdfSettings
from studio.core.workspace.adf_file import (
    BUSY_TIMEOUT_S,
    AdfFile,
    AdfFileError,
    SourceWrite,
    source_path_problem,
)
from studio.core.workspace.agent_document import (
    AgentDocument,
    FileStamp,
    HookConflict,
    _Disk,
    _parse,
    with_metadata_stamp,
)
from studio.core.workspace.atomic_write import write_atomically
from studio.core.workspace.folder import (
    STATE_DIR,
    SourceFile,
    StudioSettings,
    Workspace,
    WorkspaceFileError,
)
from studio.core.workspace.hook_merge import ABSENT, hook_in

STATE_SUFFIX = ".hookstudio"
SOURCES_DIR = "sources"
ADF_RULE = "workspace.adf"
ADF_SECTION = "adf"

_READ_ONLY_FILE = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH


def state_folder(adf_path: str | Path) -> Path:
    """Where the studio keeps its own state for the agent file ``adf_path``."""
    path = Path(adf_path)
    return path.with_name(path.name + STATE_SUFFIX)


def workspace_error(exc: AdfFileError) -> WorkspaceFileError:
    return WorkspaceFileError(str(exc.path), [Finding((), exc.reason, ADF_RULE)])


@dataclass(frozen=True)
class AdfWorkspace(Workspace):
    """A workspace over one ``.adf`` file; ``root`` is its state folder beside the file."""

    adf: AdfFile = field(kw_only=True, compare=False, repr=False)
    # What sync_sources last copied, by path: (length, updated_at) of the row.
    _copied: dict[str, tuple[int, str | None]] = field(
        default_factory=dict, kw_only=True, compare=False, repr=False
    )
    kind: ClassVar[str] = "adf"

    @classmethod
    def open_file(cls, path: str | Path, *, timeout: float = BUSY_TIMEOUT_S) -> AdfWorkspace:
        """Open the agent file ``path`` and make its state folder (with the folder of source
        copies, where a runtime may start before the first copy). Raises
        :class:`~studio.core.workspace.adf_file.AdfFileError` (file named, file untouched)."""
        adf = AdfFile.open(Path(os.path.realpath(path)), timeout=timeout)
        workspace = cls(state_folder(adf.path), adf=adf)
        try:
            workspace.source_root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise AdfFileError(
                adf.path,
                f"cannot create the studio's folder {workspace.root} ({exc.strerror or exc})",
            ) from None
        return workspace

    # -- what was opened -----------------------------------------------------------------------

    @property
    def location(self) -> Path:
        return self.adf.path

    @property
    def agent_path(self) -> Path:
        """The agent file itself: the config is in it, never in an ``agent.json``."""
        return self.adf.path

    @property
    def agent_label(self) -> str:
        return self.adf.path.name

    @property
    def source_root(self) -> Path:
        return self.root / STATE_DIR / SOURCES_DIR

    @property
    def read_only_reason(self) -> str | None:
        return self.adf.read_only_reason

    @property
    def open_elsewhere(self) -> bool:
        return self.adf.open_elsewhere

    def looks_open(self) -> bool:
        return self.adf.looks_open()

    def notice(self) -> str | None:
        name = self.adf.path.name
        if self.read_only_reason:
            return f"{name}: {self.read_only_reason}"
        if self.looks_open():
            return (
                f"{name} looks open in ADF (-wal/-shm beside it): config changes cannot be saved "
                "until ADF closes the agent, or ADF would overwrite them; source changes can, "
                "but ADF's open editor may write its copy back"
            )
        return None

    # -- the agent config ----------------------------------------------------------------------

    def agent_document(self) -> object:
        try:
            return self.adf.config()
        except AdfFileError as exc:
            raise workspace_error(exc) from None

    def hook_document(self) -> AdfHookDocument:
        try:
            return AdfHookDocument.load_adf(self.adf)
        except AdfFileError as exc:
            raise workspace_error(exc) from None

    def settings(self) -> StudioSettings:
        """``hookstudio.json`` in the state folder, with the ``adf`` section taken from the
        agent file: the sources whose ``authorized`` column is 1."""
        checked = super().settings()
        try:
            authorized = tuple(f.path for f in self.adf.entries() if f.authorized)
        except AdfFileError as exc:
            raise workspace_error(exc) from None
        # The folder's settings are shared by every caller while the file is unchanged: the
        # section read from the agent file goes on a copy of its own.
        settings = checked.model_copy()
        settings._sections = {**checked._sections, ADF_SECTION: AdfSettings(authorized=authorized)}
        return settings

    # -- hook sources --------------------------------------------------------------------------

    def hook_sources(self, extensions: tuple[str, ...]) -> list[str]:
        """As a folder's: the paths to offer as sources, none when the agent's files cannot be
        read (a folder skips what it cannot list, too). Why is said where the files are listed
        (:meth:`source_files`) and where a run reads them."""
        try:
            return [f.path for f in self.adf.entries() if f.path.endswith(extensions)]
        except AdfFileError:
            return []

    def source_files(self, extensions: tuple[str, ...]) -> list[SourceFile]:
        try:
            files = self.adf.entries()
        except AdfFileError as exc:
            raise workspace_error(exc) from None
        return [
            SourceFile(f.path, f.protection, f.authorized, f.mime_type, f.size)
            for f in files
            if f.path.endswith(extensions)
        ]

    def read_source(self, path: str) -> str:
        try:
            found = self.adf.file(path)
        except AdfFileError as exc:
            raise workspace_error(exc) from None
        if found is None:
            raise WorkspaceFileError(
                str(self.adf.path), [Finding((), f"no file {path!r} in the agent", ADF_RULE)]
            )
        text = found.text
        if text is None:
            raise WorkspaceFileError(
                str(self.adf.path), [Finding((), f"{path} is not UTF-8 text", ADF_RULE)]
            )
        return text

    def write_source(self, path: str, text: str, *, deauthorize: bool = False) -> SourceWrite:
        """Write into ``adf_files`` (see :meth:`AdfFile.write_source`): ``would_deauthorize``
        asks the caller to confirm; raises ``AdfFileError`` when refused or busy."""
        return self.adf.write_source(path, text, deauthorize=deauthorize)

    def missing_source(self, path: str) -> str | None:
        """ADF looks a hook source up by its exact ``adf_files`` key (``lib/x.ts``, never
        ``./lib/x.ts``), so a path that names no row fails there even when its copy resolves."""
        try:
            paths = {entry.path for entry in self.adf.entries()}
        except AdfFileError as exc:
            return exc.reason
        if path in paths:
            return None
        problem = f"the hook source '{path}' is not a file of the agent {self.adf.path.name}"
        bare = path
        while bare.startswith("./"):
            bare = bare[2:]
        if bare in paths:
            problem += f" (ADF names its files exactly: '{bare}')"
        return problem

    copies_sources = True

    def sync_sources(self) -> Path:
        """Copy the agent's files into :attr:`source_root` for the runtimes, each read-only.

        A file is fetched only when its row's length or ``updated_at`` differs from what this
        workspace copied last (or its copy is gone), and written only when its bytes differ
        from the copy. Copies of files no longer in the agent are removed. A file that cannot
        be copied (a path that is no relative file path, or a folder in the way) is skipped;
        running it then reports it missing."""
        try:
            entries = self.adf.entries()
        except AdfFileError as exc:
            raise workspace_error(exc) from None
        target_root = self.source_root
        target_root.mkdir(parents=True, exist_ok=True)
        wanted: set[Path] = set()
        for entry in entries:
            if source_path_problem(entry.path):
                continue
            target = target_root / entry.path
            wanted.add(target)
            key = (entry.length, entry.updated_at)
            if self._copied.get(entry.path) == key and _size(target) == entry.length:
                continue
            try:
                source = self.adf.file(entry.path)
            except AdfFileError as exc:
                raise workspace_error(exc) from None
            if source is None:
                continue  # deleted since the list was read
            try:
                _copy(target, source.content)
            except OSError:
                continue
            self._copied[entry.path] = (len(source.content), source.updated_at)
        for dirpath, _dirnames, filenames in os.walk(target_root, topdown=False):
            for name in filenames:
                stale = Path(dirpath) / name
                if stale not in wanted:
                    self._copied.pop(stale.relative_to(target_root).as_posix(), None)
                    with contextlib.suppress(OSError):
                        stale.unlink()
            if Path(dirpath) != target_root:
                with contextlib.suppress(OSError):
                    os.rmdir(dirpath)  # only when empty
        return target_root


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


def _copy(target: Path, content: bytes) -> None:
    with contextlib.suppress(OSError):
        if read_bytes(target) == content:
            return
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(target, content)
    os.chmod(target, _READ_ONLY_FILE)


_CHANGED = FileStamp(0, 0, 0)


class AdfHookDocument(AgentDocument):
    """The config of an ``.adf`` with the editing API of ``agent.json``'s document.

    Saving goes through :meth:`AdfFile.save_config_text`: inside one transaction the config is
    re-read, only ``pre_llm_hook`` is changed (every other key keeps its bytes and place) and
    ``metadata.updated_at`` is set to the save's time. When the hook in the file is no longer
    the one loaded, it is merged three ways as for ``agent.json``: :class:`HookConflict` when
    it was changed there differently, unless ``force``."""

    def __init__(self, adf: AdfFile, text: str) -> None:
        super().__init__(adf.path, _Disk(text.encode("utf-8"), None), _parse(text, adf.path), False)
        self.adf = adf

    @classmethod
    def load_adf(cls, adf: AdfFile) -> AdfHookDocument:
        return cls(adf, adf.config_text())

    def reload(self) -> None:
        text = self.adf.config_text()
        self._disk, self._parsed = _Disk(text.encode("utf-8"), None), _parse(text, self.path)

    def changed_on_disk(self) -> bool:
        return self.adf.config_text() != self.text

    def save_config(self, config: Mapping[str, Any], *, force: bool = False) -> str:
        return self._save_hook(dict(config), force)

    def remove_hook(self, *, force: bool = False) -> str:
        if HOOK_KEY not in self.document:
            return self.text
        return self._save_hook(None, force)

    def _save_hook(self, config: dict[str, Any] | None, force: bool) -> str:
        base = hook_in(self.document)
        ours = ABSENT if config is None else config

        def edit(current: str, stamp: str) -> str:
            theirs = AgentDocument.from_text(current, self.path)
            merge, new = theirs.merged_text(base, ours)
            if new is None:
                if not force:
                    raise HookConflict(self.path, _CHANGED, _CHANGED, merge)
                new = theirs.text_with(ours)
            if new == current:
                return current
            return with_metadata_stamp(new, stamp, self.path)

        text = self.adf.save_config_text(edit)
        self._disk, self._parsed = _Disk(text.encode("utf-8"), None), _parse(text, self.path)
        return text
