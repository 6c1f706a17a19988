"""The per-line profile as a picture (SVG): a heat strip of the source (one row per line, coloured by its share
of the samples) beside one stall-reason bar per hot line. Plain SVG text, no editor code: the language server
sends it and the extension shows it in a webview; tests parse it."""

from __future__ import annotations

from html import escape

from cutegen.records import HotLine, LineProfile

ROW = 3  # px per source line in the strip
STRIP_W = 46
BAR_W = 240
BAR_H = 16
TEXT_W = 270
# One colour per stall reason (grouped: memory blue, shared/MIO purple, math orange, sync red, issue grey).
COLOURS = {
    "long_scoreboard": "#1f77b4", "lg_throttle": "#4f9bd9", "tex_throttle": "#9ecae1", "drain": "#6baed6",
    "mio_throttle": "#7b4ea3", "short_scoreboard": "#a682c8", "math_pipe_throttle": "#ff7f0e", "wait": "#fdae6b",
    "dispatch_stall": "#e6550d", "barrier": "#d62728", "membar": "#ff9896", "warpgroup_arrive": "#c0392b",
    "branch_resolving": "#8c564b", "no_instructions": "#c49c94", "imc_miss": "#bcbd22", "sleeping": "#dbdb8d",
    "selected": "#2ca02c", "not_selected": "#98df8a", "misc": "#7f7f7f",
}


def heat(share: float, hottest: float) -> str:
    """White → red by the share relative to the hottest line."""
    t = 0.0 if hottest <= 0 else min(1.0, share / hottest)
    g = int(235 - 190 * t)
    return f"rgb(245,{g},{int(235 - 215 * t)})"


def draw(profile: LineProfile, file: str, source: str, *, top: int = 8, stale: bool = False) -> str:
    lines = source.splitlines() or [""]
    hot = profile.hottest(top, file)
    by_line = {h.line: h for h in profile.lines if h.file == file}
    hottest = max((h.share for h in by_line.values()), default=0.0)
    strip_h = len(lines) * ROW
    bars_h = 40 + len(hot) * (BAR_H + 22) + 80
    height = max(strip_h + 30, bars_h)
    width = STRIP_W + 30 + TEXT_W + BAR_W + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="11">',
           f'<title>{escape(_title(profile, file, stale))}</title>',
           f'<rect class="strip-frame" x="0" y="20" width="{STRIP_W}" height="{strip_h}" '
           'fill="#fafafa" stroke="#999"/>']
    out.append(f'<text x="0" y="12">{"stale: " if stale else ""}lines 1–{len(lines)}</text>')
    for n in sorted(by_line):
        if n <= len(lines):
            h = by_line[n]
            out.append(f'<rect class="heat" data-line="{n}" x="1" y="{20 + (n - 1) * ROW}" width="{STRIP_W - 2}" '
                       f'height="{ROW}" fill="{heat(h.share, hottest)}">'
                       f'<title>line {n}: {h.share * 100:.1f} %</title></rect>')
    x0 = STRIP_W + 30
    out.append(f'<text x="{x0}" y="12" font-weight="bold">{escape(_title(profile, file, stale))}</text>')
    for i, h in enumerate(hot):
        y = 40 + i * (BAR_H + 22)
        out.append(_link(h, lines, x0, y, ROW * (h.line - 1) + 20 + ROW / 2))
        out += _bar(h, x0 + TEXT_W, y)
    out += _legend(hot, x0, 40 + len(hot) * (BAR_H + 22) + 10)
    out.append("</svg>")
    return "\n".join(out)


def _title(profile: LineProfile, file: str, stale: bool) -> str:
    text = f"{profile.user_share * 100:.0f} % of {profile.total_samples:,} samples on user lines"
    return ("STALE (the file changed since this profile): " if stale else "") + text


def _link(h: HotLine, lines: list[str], x: float, y: float, strip_y: float) -> str:
    text = h.text or (lines[h.line - 1].strip() if 0 < h.line <= len(lines) else "")
    label = f"{h.line:>4} {h.share * 100:5.1f} %  {text[:30]}"
    return (f'<line x1="{STRIP_W}" y1="{strip_y}" x2="{x - 4}" y2="{y + BAR_H / 2}" stroke="#bbb"/>'
            f'<text class="hot-line" data-line="{h.line}" x="{x}" y="{y + 12}">{escape(label)}</text>')


def _bar(h: HotLine, x: float, y: float) -> list[str]:
    total = sum(h.stalls.values()) or 1
    out, at = [], x
    for reason, count in h.stalls.items():
        w = BAR_W * count / total
        if w < 0.5:
            continue
        out.append(f'<rect class="stall" data-line="{h.line}" data-reason="{escape(reason)}" x="{at:.1f}" y="{y}" '
                   f'width="{w:.1f}" height="{BAR_H}" fill="{COLOURS.get(reason, "#7f7f7f")}">'
                   f'<title>{escape(reason)}: {count / total * 100:.0f} %</title></rect>')
        at += w
    top = h.top_stalls(1)
    if top:
        out.append(f'<text x="{x}" y="{y + BAR_H + 11}" fill="#555">{escape(top[0][0])} '
                   f'{top[0][1] / total * 100:.0f} %</text>')
    return out


def _legend(hot: list[HotLine], x: float, y: float) -> list[str]:
    reasons = list(dict.fromkeys(r for h in hot for r in h.stalls))[:12]
    out = []
    for i, reason in enumerate(reasons):
        cx, cy = x + (i % 3) * 170, y + (i // 3) * 16
        out.append(f'<rect x="{cx}" y="{cy}" width="10" height="10" fill="{COLOURS.get(reason, "#7f7f7f")}"/>'
                   f'<text x="{cx + 14}" y="{cy + 9}">{escape(reason)}</text>')
    return out
