"""Work that should wait for the repaint already asked for.

A widget changed with ``update()`` or a new text is repainted on a later turn of the event loop,
by an event Qt posts at low priority; a zero timer or a queued call comes before it. Work posted
here at the same low priority comes after it, so the window shows what changed first, and the
work (handing a large computation to another thread, say) does not share the interpreter with
that paint.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt

_AFTER_PAINT = QEvent.Type(QEvent.registerEventType())


class _Call(QEvent):
    def __init__(self, call: Callable[[], None]) -> None:
        super().__init__(_AFTER_PAINT)
        self.call = call


class _Caller(QObject):
    def event(self, event: QEvent) -> bool:
        if isinstance(event, _Call):
            event.call()
            return True
        return super().event(event)


def after_pending_paint(owner: QObject, call: Callable[[], None]) -> None:
    """Call ``call`` on ``owner``'s thread once the repaints asked for so far are done; never
    if ``owner`` is deleted first."""
    caller = owner.findChild(_Caller, "afterPaint", Qt.FindChildOption.FindDirectChildrenOnly)
    if caller is None:
        caller = _Caller(owner)
        caller.setObjectName("afterPaint")
    QCoreApplication.postEvent(caller, _Call(call), Qt.EventPriority.LowEventPriority.value)
