"""The samples open in the editor: the one on screen and the ones kept because they have unsaved
edits (each with its own editor and undo history). This reads them, checks them as they are
typed, follows their files on disk and saves them; :class:`~.sample_view.SampleView` shows them.

Speed. Reading, parsing and checking happen in worker threads (jobs of the engine bridge; the
parse goes in pieces, so a worker never holds the interpreter for long). Once the file is read,
its text goes into the editor: the GUI thread moves it into the editor's document in slices
sized to take about a hundredth of a second each, the event loop running between them; the top
of a large sample is painted with the first slice, and the rest goes in below it without
repainting the view. Then the text is checked (a small one is checked as it is read), and the
sample is open: editable, savable, its problems listed. When the user stops typing, a large
document's text is read for its check a few thousand lines per turn (read whole, it would hold
the GUI thread for tens of milliseconds each time). A large document is coloured only where
it is on screen, its parsed value is not kept unless its structure is on screen, and the tree is
filled only as its branches are opened.

A save is atomic and only happens when the text is JSON; contract findings do not stop it, but
the status line says that they remain.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from studio.core.json.locate import parse_json_in_pieces
from studio.core.json.reindent import LONG_LINE, longest_line, reindent
from studio.core.workspace.sample_check import (
    Problem,
    SampleCheck,
    check_sample_text,
    locate_pointer,
    sample_outline,
)
from studio.core.workspace.sample_files import (
    LoadedSample,
    SampleReadError,
    SampleText,
    SavedSample,
    Stamp,
    disk_state,
    file_stamp,
    is_large,
    read_sample_file,
    save_sample_text,
)
from studio.engine.collector import collector_paused
from studio.ui.engine_bridge import EngineBridge, Job
from studio.ui.samples.json_text_edit import JsonTextEdit, text_of
from studio.ui.samples.open_sample import FILL_SLICE, Fill, OpenSample, TextFill
from studio.ui.samples.problems import check_summary
from studio.ui.samples.sample_view import SampleView
from studio.ui.samples.text_read import TextRead, joined_text

CHECK_DELAY_MS = 250
CHECK_DELAY_LARGE_MS = 700


def _let_go(_values: Any) -> None:
    """Hold the values a moment, so that this thread, not the GUI thread, lets go of them last
    and frees them."""
    time.sleep(0.25)


def _check(text: str, keep_document: bool) -> SampleCheck:
    """:func:`check_sample_text` with the cycle collector paused: parsing a large sample makes a
    great many containers, and a pass over all of them, started by whichever thread makes the
    next one, holds the interpreter (and the window, which waits for it) for tens of
    milliseconds."""
    with collector_paused():
        return check_sample_text(text, keep_document)


def _check_pieces(pieces: list[str], keep_document: bool) -> SampleCheck:
    return _check(joined_text(pieces), keep_document)


def _locate_in_pieces(pieces: list[str], where: str) -> tuple[int, int, int, int, bool] | None:
    return locate_pointer(joined_text(pieces), where)


def _parse_pieces(pieces: list[str]) -> Any:
    return parse_json_in_pieces(joined_text(pieces))


def _save_pieces(path: Path, pieces: list[str], crlf: bool, keep_document: bool) -> SavedSample:
    return save_sample_text(path, joined_text(pieces), crlf, keep_document)


def _read(path: Path, keep_document: bool, as_written: bool) -> tuple[SampleText, int]:
    """The sample file's text, checked too when it goes into the editor at once; and the length
    of its longest line when that line was too long to show as written and the text was laid out
    again (0 when it is shown as written: ``as_written``, or no line is that long)."""
    read = read_sample_file(path)
    longest = 0
    if not as_written and len(read.text) > LONG_LINE:
        longest = longest_line(read.text)
        indented = reindent(read.text) if longest > LONG_LINE else None
        if indented is None:
            longest = 0
        else:
            lines = indented.count("\n") + 1
            read = SampleText(indented, read.crlf, read.stamp, read.digest, lines)
    if len(read.text) > FILL_SLICE:
        return read, longest
    check = _check(read.text, keep_document or not is_large(read.text, read.lines))
    return LoadedSample(read.text, read.crlf, read.stamp, read.digest, read.lines, check), longest


def _cancel_all(jobs: set[Job]) -> None:
    for job in jobs:
        job.cancel()


class OpenSamples(QObject):
    """The sample on screen and the ones kept with unsaved edits. Which sample to show is the
    owner's choice: :meth:`open`, :meth:`forget`, :meth:`rename`."""

    sample_opened = Signal(str)  # the sample's text is in the editor (after a load or reload)
    sample_saved = Signal(str)
    checked = Signal()  # the problems list shows the check of the current text
    modified_changed = Signal()  # which samples have unsaved edits may have changed

    def __init__(
        self, bridge: EngineBridge, view: SampleView, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self.view = view
        self._current: OpenSample | None = None
        self._drafts: dict[str, OpenSample] = {}
        self._load_serial = 0
        self._serials = itertools.count(1)
        self._showing = False
        self._structure_dirty = True
        self._jobs: set[Job] = set()
        # The jobs answer through their own signals, not through this object: once it is gone
        # (and its view with it), they must say nothing more.
        jobs = self._jobs
        self.destroyed.connect(lambda: _cancel_all(jobs))

        self._check_timer = QTimer(self)
        self._check_timer.setSingleShot(True)
        self._check_timer.timeout.connect(self._start_check)
        self._text_read = TextRead(self)
        self._text_read.done.connect(self._check_read)
        # A large document's text, for a jump to a value (to this pointer) or for its structure.
        self._jump_read = TextRead(self)
        self._jump_read.done.connect(self._jump_text_read)
        self._jump_pointer = ""
        self._structure_read = TextRead(self)
        self._structure_read.done.connect(self._structure_text_read)
        self._save_read = TextRead(self)
        self._save_read.done.connect(self._save_text_read)
        self._saving_read: OpenSample | None = None  # the sample whose text is read for a save
        self._filler = TextFill(self)
        self._filler.finished.connect(self._on_text_in)
        self._filler.progressed.connect(self._on_text_progress)
        self._fill: Fill | None = None  # the sample being opened: its text or its check to come

        self._listen_to(view.blank)
        view.save_action.triggered.connect(self.save)
        view.save_button.clicked.connect(self.save)
        view.problems.problem_activated.connect(self._on_problem_activated)
        view.structure.pointer_activated.connect(self.jump_to)
        view.tabs.currentChanged.connect(self._on_tab_changed)
        view.notice.reload_button.clicked.connect(self._on_reload_clicked)
        view.notice.keep_button.clicked.connect(self._on_keep_clicked)
        view.layout_notice.as_written_button.clicked.connect(self._on_as_written_clicked)
        view.layout_notice.ok_button.clicked.connect(self._on_layout_seen)
        view.theme_changed.connect(self._on_theme_changed)
        self._update_actions()

    def _submit(
        self, then: Callable[[Any, BaseException | None], None], function: Any, *args: Any
    ) -> None:
        """Run ``function(*args)`` off the GUI thread; ``then(result, error)`` on its answer."""
        self._jobs.difference_update([job for job in self._jobs if job.done])
        job = self.bridge.submit(function, *args)
        job.finished.connect(lambda result: then(result, None))
        job.failed.connect(lambda error: then(None, error))
        self._jobs.add(job)

    def _new_view(self) -> JsonTextEdit:
        return self._listen_to(self.view.new_text_edit())

    def _listen_to(self, view: JsonTextEdit) -> JsonTextEdit:
        view.textChanged.connect(self._on_text_changed)
        view.modificationChanged.connect(self._on_modification_changed)
        view.cursorPositionChanged.connect(self._on_cursor_moved)
        view.save_requested.connect(self.save)
        return view

    def _from_current(self) -> bool:
        """Whether the signal being handled comes from the editor on screen."""
        return self.sender() is self.view.editor

    # ---- the interface ----------------------------------------------------------------------
    @property
    def current(self) -> OpenSample | None:
        return self._current

    def current_sample(self) -> str | None:
        return self._current.name if self._current is not None else None

    def modified_samples(self) -> list[str]:
        opened = list(self._drafts.values())
        if self._current is not None and self._current.name not in self._drafts:
            opened.append(self._current)
        return sorted(o.name for o in opened if o.modified)

    def open(self, name: str, path: Path) -> None:
        """Show sample ``name`` (its file is ``path``): its kept edits, or else the file."""
        current = self._current
        if current is not None and current.name == name and current.failed is None:
            return
        self._close_current()
        draft = self._drafts.get(name)
        if draft is not None:
            self._current = draft
            self._show(draft)
            if draft.stamp != file_stamp(draft.path):
                self._check_disk(draft)
            # Its text is in the editor already: say so, as a sample read from disk does.
            self.sample_opened.emit(name)
            return
        opened = OpenSample(name, path)
        self._current = opened
        self._load(opened)

    def close_all(self) -> None:
        """Show no sample and drop every kept edit (another workspace is opening)."""
        self._close_current()
        for draft in self._drafts.values():
            self._discard(draft)
        self._drafts.clear()

    def forget(self, name: str) -> None:
        """Sample ``name`` is gone: stop showing it and drop its edits."""
        draft = self._drafts.pop(name, None)
        if self._current is not None and self._current.name == name:
            self._close_current(keep_draft=False)
        elif draft is not None:
            self._discard(draft)

    def rename(self, old: str, new: str, path: Path) -> None:
        """Sample ``old`` is now ``new``, in the file ``path``."""
        for opened in self._all_open():
            if opened.name == old:
                opened.name = new
                opened.path = path
                opened.stamp = file_stamp(path)
        draft = self._drafts.pop(old, None)
        if draft is not None:
            self._drafts[new] = draft

    def follow_disk(self, touched: set[str], everything: bool) -> None:
        """The files ``touched`` (real paths) changed outside the studio, or perhaps all of them:
        a sample without unsaved edits is reloaded, else a notice offers to reload it."""
        for opened in self._all_open():
            if opened.document is None:
                continue
            if not everything and os.path.realpath(opened.path) not in touched:
                continue
            self._check_disk(opened)

    def show_nothing(self, message: str, keep_current: bool = False) -> None:
        """Show ``message`` instead of a sample; the current one is closed unless
        ``keep_current``."""
        if not keep_current:
            self._close_current()
        self._showing = True
        try:
            self.view.show_empty(message)
        finally:
            self._showing = False
        self.show_title()
        self._update_actions()

    def show_title(self) -> None:
        opened = self._current
        if opened is None:
            self.view.show_title(None)
            return
        contract = (opened.check.contract if opened.check else None) or opened.shown_contract
        self.view.show_title(opened.name, opened.path, opened.modified, contract or "")

    def _all_open(self) -> list[OpenSample]:
        opened_ones = [*self._drafts.values(), self._current]
        return list({id(o): o for o in opened_ones if o is not None}.values())

    def _update_actions(self) -> None:
        opened = self._current
        filling = self._fill is not None
        self.view.set_can_save(opened is not None and opened.document is not None and not filling)

    # ---- opening -------------------------------------------------------------------------------
    def _load(
        self, opened: OpenSample, keep_view: tuple[int, int] | None = None, discard: bool = False
    ) -> None:
        """Read ``opened`` from disk in the background, then show it. On a reload the old text
        stays on screen until the new one is read; edits made meanwhile win unless ``discard``."""
        self._load_serial = next(self._serials)
        self._cancel_fill()
        if keep_view is None:
            self.show_nothing(f"Opening {opened.name}…", keep_current=True)
        self.show_title()
        self._submit(
            partial(self._on_loaded, self._load_serial, opened, keep_view, discard),
            _read,
            opened.path,
            self.view.structure_shown(),
            opened.as_written,
        )

    def _on_loaded(
        self,
        serial: int,
        opened: OpenSample,
        keep_view: tuple[int, int] | None,
        discard: bool,
        read: tuple[SampleText, int] | None,
        error: Any,
    ) -> None:
        if serial != self._load_serial or opened is not self._current:
            return
        if error is not None or read is None:
            opened.failed = str(error) if isinstance(error, SampleReadError) else repr(error)
            if opened.view is None:
                self.show_nothing(opened.failed, keep_current=True)
            self.view.say(opened.failed, error=True)
            return
        old = opened.document
        if old is not None and old.isModified() and not discard:
            # Edited while the new version was being read: the edits win, and the user is told.
            opened.notice = "changed"
            self._show_notice(opened)
            return
        loaded, opened.laid_out_from = read
        opened.failed = None
        if opened.view is not None:
            self._text_read.cancel()
            self._cancel_lookup_reads()
            self._stop_save_read(opened)
            self.view.drop_text_edit(opened.view)
        # The new editor is on screen from the start and the text streams into it, a slice per
        # turn of the event loop: each slice is laid out as it arrives, never the whole at once.
        view = self._new_view()
        opened.start_loading(view, loaded, self.view.theme)
        self._display(view)
        view.visible_highlighter.set_active(opened.large)
        fill = Fill(opened, loaded, view, keep_view)
        if isinstance(loaded, LoadedSample):
            fill.check = loaded.check
        self._fill = fill
        self._update_actions()
        self._filler.start(fill)

    def _cancel_fill(self) -> None:
        self._filler.cancel()
        fill, self._fill = self._fill, None
        if fill is not None:
            fill.opened.stop_loading(fill.view)
            self.view.drop_text_edit(fill.view)
            self._release(fill.check)

    def _on_text_progress(self, fill: Fill) -> None:
        loaded = fill.loaded
        megabytes = (loaded.stamp[1] if loaded.stamp else len(loaded.text)) / 1e6
        done = fill.at * 100 // len(loaded.text)
        self.view.say(f"Opening {fill.opened.name} ({megabytes:.1f} MB)… {done}%")

    def _on_text_in(self, fill: Fill) -> None:
        """All of the text is in the editor: check it. (Checked while the text goes in, the
        parse would take the interpreter from the GUI thread between its slices.)"""
        if fill is not self._fill:
            return
        if isinstance(fill.loaded, LoadedSample):
            self._finish_fill(fill)
            return
        self.view.say(f"Checking {fill.opened.name}…")
        keep = not fill.opened.large or self.view.structure_shown()
        self._submit(partial(self._on_load_checked, fill), _check, fill.loaded.text, keep)

    def _on_load_checked(self, fill: Fill, check: SampleCheck | None, error: Any) -> None:
        if fill is not self._fill:
            self._release(check)
            return
        fill.check = check
        if check is None:
            self.view.say(f"The sample could not be checked: {error!r}", error=True)
        self._finish_fill(fill)

    def _finish_fill(self, fill: Fill) -> None:
        """All of the text is in its editor and its check is back: the sample is open."""
        self._fill = None
        opened, loaded = fill.opened, fill.loaded
        opened.finish_loading(loaded)
        if fill.check is not None:
            self._set_check(opened, fill.check, fill.view.document().revision())
        fill.restore_place()
        self._structure_dirty = True
        self._show(opened)
        if fill.check is not None:
            self.view.say(check_summary(fill.check))
        self.sample_opened.emit(opened.name)

    def _close_current(self, keep_draft: bool = True) -> None:
        """Stop showing the current sample; keep it when it has unsaved edits."""
        self._cancel_fill()
        self._check_timer.stop()
        self._text_read.cancel()
        self._cancel_lookup_reads()
        opened = self._current
        self._current = None
        if opened is None:
            return
        self._display(self.view.blank)
        if keep_draft and opened.modified:
            self._drafts[opened.name] = opened
        else:
            self._drafts.pop(opened.name, None)
            self._discard(opened)
        self.modified_changed.emit()

    def _discard(self, opened: OpenSample) -> None:
        self._stop_save_read(opened)
        if opened.view is not None:
            self.view.drop_text_edit(opened.view)
        self._release(*opened.let_go())

    def _set_check(self, opened: OpenSample, check: SampleCheck, revision: int) -> None:
        """Keep ``check`` as the sample's latest; what it replaces is let go off this thread."""
        old = opened.take_check(check, revision)
        if check.valid_json:
            self._structure_dirty = True
        self._release(*old)

    def _release(self, *values: Any) -> None:
        """Free a large parsed document in a worker thread: freeing hundreds of thousands of
        objects takes tens of milliseconds that the GUI thread should not spend."""
        if any(v is not None for v in values):
            self.bridge.submit(_let_go, values)

    def _show(self, opened: OpenSample) -> None:
        """Put ``opened``'s editor on screen, with its marks, problems and structure."""
        assert opened.view is not None
        self._display(opened.view)
        opened.view.setReadOnly(False)
        self.view.forget_jump()
        self._show_check(opened)
        if opened.document is not None and opened.checked_revision != opened.document.revision():
            # Its last check came back while another sample was on screen: check it again.
            self._check_timer.start(0)
        self._structure_dirty = True
        if self.view.structure_shown():
            self._build_structure()
        self._show_notice(opened)
        self.show_title()
        self.modified_changed.emit()
        self._update_actions()
        self._show_position()

    # ---- files changed on disk -----------------------------------------------------------------
    def _check_disk(self, opened: OpenSample) -> None:
        if opened.saving:
            return  # our own write; the save's result records the new stamp
        stamp = file_stamp(opened.path)
        if stamp == opened.stamp and stamp is not None:
            return
        if stamp is None:
            self._on_disk_gone(opened)
            return
        self._submit(partial(self._on_disk_read, opened), disk_state, opened.path)

    def _on_disk_gone(self, opened: OpenSample) -> None:
        if opened.document is None or (opened.stamp is None and opened.notice is None):
            return  # already told, and the user chose to keep the edits
        if not opened.document.isModified():
            if opened is self._current:
                self._close_current(keep_draft=False)
                self.show_nothing(f"{opened.name} was deleted on disk.")
            else:
                self._drafts.pop(opened.name, None)
                self._discard(opened)
            return
        opened.notice = "deleted"
        if opened is self._current:
            self._show_notice(opened)

    def _on_disk_read(
        self, opened: OpenSample, state: tuple[Stamp | None, str] | None, error: Any
    ) -> None:
        if opened.document is None:
            return
        if state is None:
            if isinstance(error, FileNotFoundError):
                self._on_disk_gone(opened)
            return
        stamp, digest = state
        if digest == opened.digest:
            opened.stamp = stamp  # touched, or our own save: the same bytes
            return
        if not opened.document.isModified():
            if opened is self._current:
                self._load(opened, keep_view=self._view_place())
                self.view.say(f"{opened.name} changed on disk and was reloaded")
            else:
                self._drafts.pop(opened.name, None)
                self._discard(opened)
            return
        opened.notice = "changed"
        if opened is self._current:
            self._show_notice(opened)

    def _view_place(self) -> tuple[int, int]:
        """Where the editor's cursor and scroll bar are, to put them back after a reload."""
        return (
            self.view.editor.textCursor().position(),
            self.view.editor.verticalScrollBar().value(),
        )

    def _show_notice(self, opened: OpenSample) -> None:
        self.view.show_notice(opened.where, opened.notice)
        laid_out = 0 if opened.layout_seen else opened.laid_out_from
        self.view.show_layout_notice(opened.where, laid_out)

    def _on_reload_clicked(self) -> None:
        opened = self._current
        if opened is None:
            return
        opened.notice = None
        self.view.notice.hide()
        self._load(opened, keep_view=self._view_place(), discard=True)

    def _on_as_written_clicked(self) -> None:
        """Show the file's own layout, its long line as it is (slow to lay out)."""
        opened = self._current
        if opened is None or opened.modified:
            return
        opened.as_written = True
        opened.laid_out_from = 0
        self._load(opened, discard=True)  # which hides the bar while it reads

    def _on_layout_seen(self) -> None:
        if self._current is not None:
            self._current.layout_seen = True
        self.view.show_layout_notice("", 0)

    def _on_keep_clicked(self) -> None:
        if self._current is not None:
            self._current.notice = None
            self._current.stamp = file_stamp(self._current.path)
        self.view.notice.hide()

    # ---- checking as the user types ------------------------------------------------------------
    def _on_text_changed(self) -> None:
        opened = self._current
        if self._showing or opened is None or opened.document is None:
            return
        if not self._from_current():
            return
        self._check_timer.start(CHECK_DELAY_LARGE_MS if opened.large else CHECK_DELAY_MS)
        self.view.clear_jump()

    def _start_check(self) -> None:
        opened = self._current
        if opened is None or opened.document is None:
            return
        revision = opened.document.revision()
        if revision == opened.checked_revision:
            return
        if opened.large:
            self._text_read.start(opened.document)  # then _check_read
            return
        text = text_of(opened.document)
        self._submit(partial(self._on_checked, opened, revision), _check, text, True)

    def _check_read(self, revision: int, pieces: list[str]) -> None:
        """The large document's text is read (``revision`` of it): check it off this thread."""
        opened = self._current
        if opened is None or opened.document is None or opened.document.revision() != revision:
            return
        keep = self.view.structure_shown()
        self._submit(partial(self._on_checked, opened, revision), _check_pieces, pieces, keep)

    def _on_checked(
        self, opened: OpenSample, revision: int, check: SampleCheck | None, error: Any
    ) -> None:
        if check is None:
            self.view.say(f"The sample could not be checked: {error!r}", error=True)
            return
        if opened is not self._current or opened.document is None:
            return
        if opened.document.revision() != revision:
            return  # the text moved on; a newer check is coming
        self._set_check(opened, check, revision)
        self._show_check(opened)
        if self.view.structure_shown():
            self._build_structure()
        self.show_title()
        self.view.say(check_summary(check))

    def _show_check(self, opened: OpenSample) -> None:
        assert opened.view is not None
        self.view.show_check(opened.view, opened.check)
        if opened.check is not None:
            self.checked.emit()

    # ---- jumping to a value ----------------------------------------------------------------------
    def _on_problem_activated(self, k: int) -> None:
        opened = self._current
        if opened is None or opened.check is None or opened.document is None:
            return
        problem = opened.check.problems[k]
        if opened.checked_revision != opened.document.revision() and problem.pointer is not None:
            self.jump_to(problem.pointer)  # the text moved on: find the value again
            return
        self.view.jump(opened.document, problem)

    def jump_to(self, where: str) -> None:
        """Move the cursor to the value at JSON pointer ``where`` in the sample's text."""
        opened = self._current
        if opened is None or opened.document is None:
            return
        if opened.large:
            self._jump_pointer = where
            self._jump_read.start(opened.document)  # then _jump_text_read
            return
        then = partial(self._on_located, opened, opened.document.revision(), where)
        text = text_of(opened.document)
        if len(text) <= FILL_SLICE:
            then(locate_pointer(text, where), None)
        else:
            self._submit(then, locate_pointer, text, where)

    def _jump_text_read(self, revision: int, pieces: list[str]) -> None:
        opened, where = self._current, self._jump_pointer
        if opened is not None:
            then = partial(self._on_located, opened, revision, where)
            self._submit(then, _locate_in_pieces, pieces, where)

    def _cancel_lookup_reads(self) -> None:
        self._jump_read.cancel()
        self._structure_read.cancel()

    def _on_located(
        self,
        opened: OpenSample,
        revision: int,
        where: str,
        place: tuple[int, int, int, int, bool] | None,
        _error: BaseException | None,
    ) -> None:
        if place is None or opened is not self._current or opened.document is None:
            return
        if opened.document.revision() != revision:
            return
        line, column, end_line, end_column, exact = place
        problem = Problem("info", "", where, line, column, end_line, end_column, exact)
        self.view.jump(opened.document, problem)
        if not exact:
            self.view.say(
                f"{where} is not in the sample; the cursor is at the nearest value that is"
            )

    # ---- structure -------------------------------------------------------------------------------
    def _on_tab_changed(self, index: int) -> None:
        opened = self._current
        if index == 1 and self._structure_dirty:
            self._build_structure()
        elif index != 1 and opened is not None and opened.large:
            # Let a large document's parsed value go while nobody looks at its structure.
            self.view.structure.model.set_entries([])
            self._release(opened.shown_document)
            opened.shown_document = None
            self._structure_dirty = True

    def _build_structure(self) -> None:
        self._structure_dirty = False
        opened = self._current
        document = opened.document if opened is not None else None
        if (
            opened is not None
            and document is not None
            and opened.shown_document is None
            and opened.check is not None
            and opened.check.valid_json
        ):
            # A large document's structure is read again when it is shown (see _set_check).
            self.view.structure.clear("Reading the structure…")
            if opened.large:
                self._structure_read.start(document)  # then _structure_text_read
            else:
                then = partial(self._on_parsed, opened)
                self._submit(then, parse_json_in_pieces, text_of(document))
            return
        if opened is None or opened.shown_document is None:
            self.view.structure.clear(
                "Nothing to show until the sample is JSON." if opened is not None else None
            )
            return
        stale = opened.check is not None and not opened.check.valid_json
        self.view.structure.show_entries(
            sample_outline(opened.shown_contract, opened.shown_document),
            "The text is not JSON right now: this is its last valid version." if stale else None,
        )

    def _structure_text_read(self, _revision: int, pieces: list[str]) -> None:
        if self._current is not None:
            self._submit(partial(self._on_parsed, self._current), _parse_pieces, pieces)

    def _on_parsed(self, opened: OpenSample, document: Any, _error: BaseException | None) -> None:
        if document is None or opened is not self._current or not self.view.structure_shown():
            self._release(document)
            return
        if opened.shown_document is None:
            opened.shown_document = document
        self._build_structure()

    # ---- saving ----------------------------------------------------------------------------------
    def save(self) -> bool:
        """Save the shown sample (atomically, in the background) when its text is JSON. False when
        it cannot start; ``sample_saved`` follows when the file is written."""
        opened = self._current
        if opened is None or opened.document is None or self._fill is not None:
            return False
        document = opened.document
        check = opened.check
        if (
            check is not None
            and opened.checked_revision == document.revision()
            and not check.valid_json
        ):
            self.view.say(self._not_saved(check), error=True)
            return False
        if opened.saving:
            return False
        opened.saving = True
        if opened.large:
            # Read a few thousand lines per turn, as for a check; an edit meanwhile is saved too.
            self._saving_read = opened
            self._save_read.start(document, again_on_edit=True)  # then _save_text_read
            return True
        revision = document.revision()
        then = partial(self._on_saved, opened, revision)
        self._submit(then, save_sample_text, opened.path, text_of(document), opened.crlf, True)
        return True

    def _save_text_read(self, revision: int, pieces: list[str]) -> None:
        opened, self._saving_read = self._saving_read, None
        if opened is None:
            return
        keep = self.view.structure_shown()
        then = partial(self._on_saved, opened, revision)
        self._submit(then, _save_pieces, opened.path, pieces, opened.crlf, keep)

    def _stop_save_read(self, opened: OpenSample) -> None:
        """``opened``'s editor goes: a save reading its text is given up."""
        if self._saving_read is opened:
            self._save_read.cancel()
            self._saving_read = None
            opened.saving = False

    @staticmethod
    def _not_saved(check: SampleCheck) -> str:
        p = check.problems[0]
        return f"Not saved: the text is not JSON ({p.message} at line {p.line}, column {p.column})"

    def _on_saved(
        self, opened: OpenSample, revision: int, saved: SavedSample | None, error: Any
    ) -> None:
        opened.saving = False
        if saved is None:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else error
            self.view.say(f"Not saved: {reason}", error=True)
            return
        check = saved.check
        if not check.valid_json:
            self.view.say(self._not_saved(check), error=True)
            return
        opened.stamp = saved.stamp
        opened.digest = saved.digest
        opened.notice = None
        opened.laid_out_from = 0  # the file is laid out as shown now
        document = opened.document
        if document is not None and document.revision() == revision:
            document.setModified(False)
            self._set_check(opened, check, revision)
        if opened is self._current:
            self.view.notice.hide()
            self.view.show_layout_notice(opened.where, 0)
            if opened.checked_revision == revision:
                self._show_check(opened)
        if opened is not self._current and document is not None and not document.isModified():
            self._drafts.pop(opened.name, None)
            self._discard(opened)
        self.modified_changed.emit()
        self.show_title()
        errors = check.errors
        if errors:
            self.view.say(
                f"Saved {opened.where}, with {errors} contract problem{'s' if errors != 1 else ''} "
                "left (see Problems)",
                error=True,
            )
        else:
            self.view.say(f"Saved {opened.where}")
        self.sample_saved.emit(opened.name)

    # ---- small things ------------------------------------------------------------------------
    def _on_modification_changed(self, _modified: bool) -> None:
        if self._showing or self._fill is not None or not self._from_current():
            return
        self.modified_changed.emit()
        self.show_title()

    def _on_cursor_moved(self) -> None:
        if self._from_current():
            self._show_position()

    def _display(self, view: JsonTextEdit) -> None:
        self._showing = True
        try:
            self.view.show_text_edit(view)
        finally:
            self._showing = False

    def _show_position(self) -> None:
        self.view.show_position(self._current is not None and self._current.document is not None)

    def _on_theme_changed(self) -> None:
        for opened in [self._current, *self._drafts.values()]:
            if opened is not None and opened.highlighter is not None:
                opened.highlighter.set_theme(self.view.theme)
        if self._current is not None and self._current.document is not None:
            self._show_check(self._current)
