"""Text colours that stay readable on the palette's own base, light or dark: a colour is darkened
or lightened until its contrast ratio (as WCAG 2 defines it) reaches what body text needs."""

from __future__ import annotations

from PySide6.QtGui import QColor

# WCAG 2, level AA, for text of ordinary size.
READABLE = 4.5


def _channel(value: int) -> float:
    c = value / 255
    return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4


def luminance(color: QColor) -> float:
    return (
        0.2126 * _channel(color.red())
        + 0.7152 * _channel(color.green())
        + 0.0722 * _channel(color.blue())
    )


def contrast_ratio(a: QColor, b: QColor) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def readable_on(color: QColor, base: QColor, minimum: float = READABLE) -> QColor:
    """``color``, or the nearest shade of it (same hue) that reaches ``minimum`` contrast on
    ``base``: darker on a light base, lighter on a dark one."""
    dark_base = luminance(base) < 0.18
    shade = QColor(color)
    for _ in range(64):
        if contrast_ratio(shade, base) >= minimum:
            return shade
        step = 8 if dark_base else -8
        lightness = max(0, min(255, shade.lightness() + step))
        shade = QColor.fromHsl(shade.hslHue(), shade.hslSaturation(), lightness, shade.alpha())
    # Black or white always reaches it on any base that is not mid-grey.
    return QColor(255, 255, 255) if dark_base else QColor(0, 0, 0)
