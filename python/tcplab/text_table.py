"""Box-drawn text tables for ``tcplab run``'s summary.

The summary is the whole output of the command users run most, so it is
drawn here in a few dozen lines rather than by a general layout library,
whose import and rendering took about a seventh of the command's run
(0.1 s of 0.7 s on a slow machine). The look is the usual one: a heavy
header, light body rows, the title above on the left, a caption below."""

from __future__ import annotations

from dataclasses import dataclass, field
from unicodedata import east_asian_width

ELLIPSIS = "…"


def cell_len(text: str) -> int:
    """Terminal columns `text` takes: wide (East Asian) characters take two."""
    if text.isascii():
        return len(text)
    return sum(2 if east_asian_width(c) in "WF" else 1 for c in text)


def _clip(text: str, width: int) -> str:
    """`text` cut to `width` columns, an ellipsis marking the cut."""
    if cell_len(text) <= width:
        return text
    out, used = [], 0
    for c in text:
        w = cell_len(c)
        if used + w > width - 1:
            break
        out.append(c)
        used += w
    return "".join(out) + ELLIPSIS


def _pad(text: str, width: int, right: bool) -> str:
    gap = " " * (width - cell_len(text))
    return gap + text if right else text + gap


@dataclass
class TextTable:
    """A table: columns (name, right-justified?), rows of strings, a title
    and an optional caption."""

    title: str
    columns: list[tuple[str, bool]]
    rows: list[list[str]] = field(default_factory=list)
    caption: str | None = None

    def add_row(self, *cells: str) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"a row of {len(cells)} cells for {len(self.columns)} columns")
        self.rows.append(list(cells))

    def widths(self, max_width: int) -> list[int]:
        """Each column's width: its widest cell, the widest first cut down
        (left-justified text before numbers) until the table fits."""
        widths = [max([cell_len(name), *(cell_len(r[i]) for r in self.rows)]) for i, (name, _) in enumerate(self.columns)]
        excess = sum(widths) + 3 * len(widths) + 1 - max_width
        while excess > 0:
            cuttable = [i for i, w in enumerate(widths) if w > 1]
            if not cuttable:
                break
            text = [i for i in cuttable if not self.columns[i][1]]
            i = max(text or cuttable, key=lambda j: widths[j])
            widths[i] -= 1
            excess -= 1
        return widths

    def render(self, max_width: int = 132) -> str:
        widths = self.widths(max_width)

        def line(left: str, fill: str, mid: str, right: str) -> str:
            return left + mid.join(fill * (w + 2) for w in widths) + right

        def cells(values: list[str], sep: str, justify: list[bool]) -> str:
            inner = sep.join(f" {_pad(_clip(v, w), w, r)} " for v, w, r in zip(values, widths, justify))
            return sep + inner + sep

        right = [r for _, r in self.columns]
        out = [self.title, line("┏", "━", "┳", "┓"), cells([n for n, _ in self.columns], "┃", right), line("┡", "━", "╇", "┩")]
        out += [cells(r, "│", right) for r in self.rows]
        out.append(line("└", "─", "┴", "┘"))
        if self.caption:
            total = sum(widths) + 3 * len(widths) + 1
            out.append(_clip(self.caption, total).center(total).rstrip())
        return "\n".join(out)
