"""SVG pictures of the layouts a probe build found.

- a plain (or swizzled) layout: a grid of offsets, row m = mode 0, column n = the other modes, coloured by offset;
- a shared-memory layout with a swizzle: each element's bank, and the accesses of one instruction (one 16-byte
  vector per thread, 8 threads down one column: an `ldmatrix` phase or a column read) highlighted where they
  conflict;
- a TiledCopy's TV layout: thread and value ids per element of its tile (as CuTe's `print_latex` draws it);
- a TiledMMA: CUTLASS's own `print_svg`, from a host program compiled for the type the probe reported.

A layout is evaluated from its static shape and stride (the value function `L(i) = sum c_k d_k`, nothing of
CuTe's algebra); one with a dynamic extent or stride cannot be drawn and says so.
"""

from __future__ import annotations

import hashlib
import html
import math
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from cutegen.files import write_atomic
from cutegen.layouts.probe import LayoutFact

MAX_ROWS, MAX_COLS = 64, 128
CELL = 34
_ELEMENT_BITS = {
    "float": 32, "int": 32, "uint32_t": 32, "tfloat32_t": 32, "double": 64, "half_t": 16, "bfloat16_t": 16,
    "__half": 16, "__nv_bfloat16": 16, "int8_t": 8, "uint8_t": 8, "float_e4m3_t": 8, "float_e5m2_t": 8,
    "uint128_t": 128, "float4": 128, "int64_t": 64,
}


class NotDrawable(ValueError):
    """The layout cannot be drawn (a dynamic extent or stride, not a layout); the message says why."""


@dataclass
class Evaluated:
    """A static layout as a function of its linear (colexicographic) index."""

    shapes: list[int]  # flattened
    strides: list[int]
    rows: int  # size of mode 0 (1 for a rank-1 layout drawn as a row)
    swizzle: tuple[int, int, int] | None = None
    base: int = 0  # a ComposedLayout's offset

    @property
    def size(self) -> int:
        n = 1
        for s in self.shapes:
            n *= s
        return n

    @property
    def cols(self) -> int:
        return self.size // self.rows

    def __call__(self, index: int) -> int:
        offset = 0
        for s, d in zip(self.shapes, self.strides):
            offset += (index % s) * d
            index //= s
        return _swizzle(self.base + offset, self.swizzle)

    def at(self, m: int, n: int) -> int:
        return self(m + self.rows * n)


def _swizzle(offset: int, sw: tuple[int, int, int] | None) -> int:
    if sw is None:
        return offset
    b, m, s = sw
    mask = ((1 << b) - 1) << (m + max(0, s))
    shifted = (offset & mask) >> s if s >= 0 else (offset & mask) << -s
    return offset ^ shifted


def _tuple(text: str):
    """'((_8,_16),_4)' → nested lists of ints; a dynamic entry (`int`) raises NotDrawable."""
    tokens = re.findall(r"\(|\)|,|[^(),]+", text.replace(" ", ""))
    pos = 0

    def item():
        nonlocal pos
        if tokens[pos] == "(":
            pos += 1
            out = [item()]
            while tokens[pos] == ",":
                pos += 1
                out.append(item())
            pos += 1  # ")"
            return out
        tok = tokens[pos]
        pos += 1
        if not re.fullmatch(r"_\d+", tok):
            raise NotDrawable(f"'{tok}' is not a static extent or stride: only layouts known at compile time are drawn")
        return int(tok[1:])

    return item()


def _flat(x) -> list[int]:
    return [v for e in x for v in _flat(e)] if isinstance(x, list) else [x]


def _size(x) -> int:
    n = 1
    for v in _flat(x):
        n *= v
    return n


def evaluate(layout: str, element_bits: int | None = None) -> Evaluated:
    """Parse 'S:D' or 'Sw<B,M,S> o _O o S:D' (CuTe notation) into a static layout function.

    A swizzle on byte addresses (`Sw<3,4,3> o smem_ptr_flag_bits<16> o L`, or a Tensor's swizzled pointer
    `Sw<3,4,3> L`) is turned into the same swizzle on element offsets (Sw<3,3,3> for 16-bit elements)."""
    swizzle, base = None, 0
    text = layout.strip()
    m = re.fullmatch(r"Sw<(\d+),(\d+),(-?\d+)> o (?:_(\d+)|smem_ptr_flag_bits<(\d+)>) o (.+)", text) or \
        re.fullmatch(r"Sw<(\d+),(\d+),(-?\d+)> ()()(\(.+)", text)
    if m:
        b, mbase, s = int(m[1]), int(m[2]), int(m[3])
        byte_bits = int(m[5]) if m[5] else (element_bits if not m[4] else None)
        if byte_bits:  # the swizzle acts on byte addresses
            shift = (byte_bits // 8).bit_length() - 1
            if mbase < shift:
                raise NotDrawable(f"a byte swizzle finer than one {byte_bits}-bit element: {layout}")
            mbase -= shift
        elif not m[4]:
            raise NotDrawable(f"a swizzled pointer of unknown element size: {layout}")
        swizzle, base, layout = (b, mbase, s), int(m[4] or 0), m[6]
    if " o " in layout or ":" not in layout:
        raise NotDrawable(f"not a layout this picture can draw: {layout}")
    shape_text, stride_text = _split_colon(layout)
    shape, stride = _tuple(shape_text), _tuple(stride_text)
    shapes, strides = _flat(shape), _flat(stride)
    if len(shapes) != len(strides):
        raise NotDrawable(f"shape and stride differ in rank: {layout}")
    rows = _size(shape[0]) if isinstance(shape, list) and len(shape) > 1 else 1
    return Evaluated(shapes, strides, rows, swizzle, base)


def _split_colon(text: str) -> tuple[str, str]:
    depth = 0
    for i, c in enumerate(text):
        depth += {"(": 1, ")": -1}.get(c, 0)
        if c == ":" and depth == 0:
            return text[:i], text[i + 1:]
    raise NotDrawable(f"not a layout: {text}")


# -- SVG helpers ------------------------------------------------------------------------------------


def _svg(width: int, height: int, body: list[str], title: str) -> str:
    width = max(width, 8 + 8 * len(title))  # the title (13 px monospace, ~8 px a character) is not clipped
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="11">')
    return "\n".join([head, f"<title>{html.escape(title)}</title>",
                      f'<rect width="{width}" height="{height}" fill="white"/>',
                      f'<text x="4" y="14" font-size="13">{html.escape(title)}</text>', *body, "</svg>\n"])


def _cell(x: int, y: int, fill: str, label: str, stroke: str = "#555", width: float = 0.5) -> str:
    return (f'<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{fill}" stroke="{stroke}" '
            f'stroke-width="{width}"/><text x="{x + CELL // 2}" y="{y + CELL // 2 + 4}" text-anchor="middle">'
            f"{html.escape(label)}</text>")


def _hsl(value: int, top: int) -> str:
    return f"hsl({int(300 * value / max(top, 1))},70%,80%)"


def _window(ev: Evaluated) -> tuple[int, int, str]:
    rows, cols = min(ev.rows, MAX_ROWS), min(ev.cols, MAX_COLS)
    note = ("" if (rows, cols) == (ev.rows, ev.cols)
            else f" (rows 0-{rows - 1} of {ev.rows}, cols 0-{cols - 1} of {ev.cols})")
    return rows, cols, note


def _axes(rows: int, cols: int, top: int) -> list[str]:
    out = [f'<text x="{40 + n * CELL + CELL // 2}" y="{top - 4}" text-anchor="middle" fill="#777">{n}</text>'
           for n in range(cols)]
    out += [f'<text x="34" y="{top + m * CELL + CELL // 2 + 4}" text-anchor="end" fill="#777">{m}</text>'
            for m in range(rows)]
    return out


# -- pictures ----------------------------------------------------------------------------------------


FOLD_AT = 32  # a grid wider than this many columns is folded into bands
PICTURE_PX = 1400  # the longer side a folded picture aims at
MAX_CELLS = 128 * 128  # beyond this, the first bands only (the title says which part)
LABEL_PX = 24  # cells smaller than this carry their offset as a tooltip instead of text


@dataclass
class _Fold:
    """How a rows x cols grid is laid out: bands of `width` columns stacked under each other (a rank-1 layout is
    one row, so its bands are rows of `width` consecutive indices)."""

    rows: int
    cols: int
    width: int
    bands: int
    cell: int

    @classmethod
    def of(cls, rows: int, cols: int) -> "_Fold":
        width = cols
        if cols > FOLD_AT:  # about as many display rows as columns: the picture comes out near square
            width = max(FOLD_AT, min(128, 1 << round(math.log2(math.sqrt(rows * cols)))))
            width = min(width, cols)
        bands = -(-cols // width)
        bands = min(bands, max(1, MAX_CELLS // (rows * width)))
        tall = max(rows * bands, width)
        cell = CELL if tall * CELL <= PICTURE_PX or width == cols and tall <= MAX_ROWS else max(8, PICTURE_PX // tall)
        return cls(rows, cols, width, bands, cell)

    @property
    def folded(self) -> bool:
        return self.width < self.cols

    def places(self):
        """(display row, display column, m, n) of every cell shown."""
        for band in range(self.bands):
            for m in range(self.rows):
                for c in range(self.width):
                    n = band * self.width + c
                    if n < self.cols:
                        yield band * self.rows + m, c, m, n


def grid_svg(title: str, layout: str, element_bits: int | None = None, subtitle: str = "") -> str:
    """The offsets grid; `subtitle`: a second line under the title (what the picture is of)."""
    ev = evaluate(layout, element_bits)
    if ev.rows > MAX_ROWS and ev.cols == 1:  # a tall single column reads as a sequence, like a rank-1 layout
        ev = Evaluated(ev.shapes, ev.strides, 1, ev.swizzle, ev.base)
    fold = _Fold.of(min(ev.rows, MAX_ROWS), ev.cols)
    top, left, size = (56 if subtitle else 40), 56, fold.cell
    top_offset = max(ev(i) for i in range(ev.size))
    body = _fold_axes(fold, top, left)
    if subtitle:
        body.append(f'<text x="4" y="30" fill="#333">{html.escape(subtitle)}</text>')
    labelled = size >= LABEL_PX
    for y, x, m, n in fold.places():
        off = ev.at(m, n)
        body.append(_sized_cell(left + x * size, top + y * size, size, _hsl(off, top_offset),
                                str(off) if labelled else "", f"({m},{n}) → {off}" if not labelled else ""))
    shown = fold.bands * fold.width if fold.bands * fold.width < ev.cols else ev.cols
    what = _fold_note(ev, fold, shown)
    width = max(left + 8 + fold.width * size, 8 + 7 * len(subtitle))  # 11 px monospace: ~7 px a character
    return _svg(width, top + fold.rows * fold.bands * size + 8, body, f"{title}: {layout}{what}")


def _fold_note(ev: Evaluated, fold: _Fold, shown: int) -> str:
    parts = []
    if fold.folded:
        parts.append(f"{fold.width} per row" if ev.rows == 1 else f"columns in bands of {fold.width}")
    if shown < ev.cols or fold.rows < ev.rows:
        parts.append(f"the first {fold.rows * shown} of {ev.size} elements")
    if fold.cell < LABEL_PX:
        parts.append("hover a cell for its offset")
    return f" ({'; '.join(parts)})" if parts else ""


def _sized_cell(x: int, y: int, size: int, fill: str, label: str, tooltip: str) -> str:
    tip = f"<title>{html.escape(tooltip)}</title>" if tooltip else ""
    rect = (f'<rect x="{x}" y="{y}" width="{size}" height="{size}" fill="{fill}" stroke="#555" '
            f'stroke-width="{0.5 if size >= 12 else 0}">{tip}</rect>')
    if not label:
        return rect
    return rect + (f'<text x="{x + size // 2}" y="{y + size // 2 + 4}" text-anchor="middle">{html.escape(label)}'
                   "</text>")


def _fold_axes(fold: _Fold, top: int, left: int) -> list[str]:
    """Column numbers within a band on top; on the left, m (or a row's first index) and where each band starts."""
    every = 1 if fold.cell >= 20 else max(1, 24 // fold.cell)
    size = fold.cell
    out = [f'<text x="{left + c * size + size // 2}" y="{top - 4}" text-anchor="middle" fill="#777">{c}</text>'
           for c in range(0, fold.width, every)]
    for band in range(fold.bands):
        for m in range(0, fold.rows, every if fold.rows > 1 else 1):
            y = top + (band * fold.rows + m) * size + size // 2 + 4
            label = (str(band * fold.width) if fold.rows == 1
                     else f"n+{band * fold.width} {m}" if m == 0 and fold.folded else str(m))
            if fold.rows == 1 and band % every:
                continue
            out.append(f'<text x="{left - 6}" y="{y}" text-anchor="end" fill="#777">{label}</text>')
        if band and fold.rows > 1:  # a band boundary
            y = top + band * fold.rows * size
            out.append(f'<line x1="{left}" y1="{y}" x2="{left + fold.width * size}" y2="{y}" '
                       'stroke="#000" stroke-width="2"/>')
    return out


def bank_conflicts(ev: Evaluated, element_bits: int, column: int = 0, vector_bits: int = 128, lanes: int = 8):
    """The elements one instruction touches (lane l reads one `vector_bits` vector at row l, starting at
    `column`) and, per lane, whether its 4-byte words share a bank with another lane's different words."""
    per_vector = max(1, vector_bits // element_bits)
    touched: dict[int, list[tuple[int, int]]] = {}
    words: dict[int, set[int]] = {}
    for lane in range(min(lanes, ev.rows)):
        cells = [(lane, column + k) for k in range(per_vector) if column + k < ev.cols]
        touched[lane] = cells
        words[lane] = {ev.at(m, n) * element_bits // 32 for m, n in cells}
    conflicted = set()
    for a in words:
        for b in words:
            if a < b and {w % 32 for w in words[a]} & {w % 32 for w in words[b]} and words[a] != words[b]:
                conflicted |= {a, b}
    return touched, conflicted


def banks_svg(title: str, layout: str, element_bits: int) -> str:
    ev = evaluate(layout, element_bits)
    rows, cols, note = _window(ev)
    touched, conflicted = bank_conflicts(ev, element_bits)
    marks = {cell: lane for lane, cells in touched.items() for cell in cells}
    top = 56  # under the title and the legend
    body = _axes(rows, cols, top)
    for m in range(rows):
        for n in range(cols):
            bank = ev.at(m, n) * element_bits // 32 % 32
            lane = marks.get((m, n))
            stroke, width = (("#d00", 2.5) if lane in conflicted
                             else ("#06c", 2.5) if lane is not None else ("#555", 0.5))
            body.append(_cell(40 + n * CELL, top + m * CELL, _hsl(bank, 31), f"b{bank}", stroke, width))
    verdict = (f"{len(conflicted)} of {len(touched)} lanes conflict (red)" if conflicted
               else f"{len(touched)} lanes, no bank conflict (blue)")
    legend = (f"one instruction: {len(touched)} lanes x 16 B down column 0; {verdict}")
    body.append(f'<text x="4" y="30" fill="#333">{html.escape(legend)}</text>')
    return _svg(48 + cols * CELL, top + rows * CELL + 8, body, f"{title}: {layout}{note}")


def tv_copy_svg(title: str, tv: str, tiler: str) -> str:
    """Thread and value ids per element of a TiledCopy's tile: TV(t, v) is the column-major index in the tile."""
    ev = evaluate(tv)
    tile = _flat(_tuple(tiler))
    m_size, n_size = tile[0], _size(tile[1:]) if len(tile) > 1 else 1
    threads = ev.rows
    owner: dict[tuple[int, int], tuple[int, int]] = {}
    for t in range(threads):
        for v in range(ev.cols):
            idx = ev.at(t, v)
            owner.setdefault((idx % m_size, idx // m_size), (t, v))
    rows, cols = min(m_size, MAX_ROWS), min(n_size, MAX_COLS)
    top = 40
    body = _axes(rows, cols, top)
    for m in range(rows):
        for n in range(cols):
            t, v = owner.get((m, n), (-1, -1))
            fill = _hsl(t % 8, 8) if t >= 0 else "#eee"
            label = f"T{t}" if t >= 0 else ""
            body.append(_cell(40 + n * CELL, top + m * CELL, fill, label))
            if t >= 0:
                body.append(f'<text x="{40 + n * CELL + CELL // 2}" y="{top + m * CELL + CELL - 3}" '
                            f'text-anchor="middle" font-size="8" fill="#444">V{v}</text>')
    return _svg(48 + cols * CELL, top + rows * CELL + 8, body, f"{title}: TV={tv} Tiler={tiler}")


def mma_svg(fact: LayoutFact, nvcc: str, cutlass_include: str, work: Path) -> str:
    """CUTLASS's `print_svg` of the TiledMMA type the compiler reported, from a host program (cached by type)."""
    type_text = fact.type
    if fact.kind == "ThrMMA":
        inner = re.match(r"cute::ThrMMA<(.*), [^,]+>$", type_text)
        if inner is None:
            raise NotDrawable(f"the compiler's type is not a ThrMMA<TiledMMA, ...>: {type_text[:200]}")
        type_text = inner.group(1)
    key = hashlib.sha256(type_text.encode()).hexdigest()[:24]
    out = work / f"mma_{key}.svg"
    if out.exists():
        return out.read_text()
    work.mkdir(parents=True, exist_ok=True)
    source = work / f"mma_{key}.cu"
    write_atomic(source, "#include <cute/tensor.hpp>\n#include <cute/util/print_svg.hpp>\n"
                      f"int main() {{ cute::print_svg({type_text}{{}}); return 0; }}\n")
    exe = work / f"mma_{key}"
    try:
        build = subprocess.run([nvcc, "-std=c++17", f"-I{cutlass_include}", str(source), "-o", str(exe)],
                               capture_output=True, text=True, timeout=600)
        if build.returncode != 0:
            raise NotDrawable("the host program for print_svg did not compile: " + build.stdout[-400:]
                              + build.stderr[-400:])
        drawn = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired as e:
        raise NotDrawable(f"the host program for print_svg took over {e.timeout:.0f} s") from None
    if drawn.returncode != 0:
        raise NotDrawable(f"the host program for print_svg failed (exit {drawn.returncode}): {drawn.stderr[-400:]}")
    write_atomic(out, drawn.stdout)
    return drawn.stdout


def element_bits(fact: LayoutFact) -> int | None:
    m = re.match(r"(?:gmem|smem|rmem) (?:const )?(\w+)", fact.layout)
    return _ELEMENT_BITS.get(m.group(1)) if m else None


_PARTITION = re.compile(r"\b(?:partition_[SDABC]|local_partition|partition_fragment_[ABC]|partition)\s*\(")


def picture(fact: LayoutFact, nvcc: str, cutlass_include: str, work: Path, declared: str = "") -> str:
    """The SVG that fits the object's kind; NotDrawable says why there is none. `declared`: the source line of the
    declaration (a thread's partition is named so: the probe sees its layout, which every thread shares)."""
    title = fact.name + (f" [{fact.instantiation}]" if fact.instantiation else "")
    if fact.kind in ("TiledMMA", "ThrMMA"):
        return mma_svg(fact, nvcc, cutlass_include, work)
    if fact.kind in ("TiledCopy", "ThrCopy"):
        m = re.search(r"TV=(\S+) Tiler=(\S+)", fact.layout)
        if m is None:
            raise NotDrawable(f"the probe printed no TV layout and tiler for this copy: {fact.layout[:200]}")
        return tv_copy_svg(title, m.group(1), m.group(2))
    if fact.kind == "Tensor":
        layout = fact.layout.split(" ", 2)[2]
        bits = element_bits(fact)
        if fact.layout.startswith("smem") and bits:
            return banks_svg(title, layout, bits)
        thread = ("thread 0's partition; every thread's has this layout"
                  if _PARTITION.search(declared) else "")
        return grid_svg(title, layout, bits, subtitle=thread)
    if fact.kind == "ComposedLayout" and fact.layout.startswith("Sw<"):
        return grid_svg(title, fact.layout)
    if fact.kind == "Layout":
        return grid_svg(title, fact.layout)
    raise NotDrawable(f"{fact.name} is a {fact.kind}: there is no picture for that kind")
