"""The per-line profile's picture: well-formed SVG, a heat row per hot line of the file, one stall bar per hot line
whose segments add up, escaped source text, and a stale profile titled as such."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from cutegen.profiler.lens_picture import BAR_W, draw, heat
from cutegen.records import HotLine, LineProfile

NS = "{http://www.w3.org/2000/svg}"
FILE = "/k/kernel.cu"
SOURCE = "\n".join(f"line {i}" for i in range(1, 41)) + "\n"


def _profile() -> LineProfile:
    return LineProfile(lines=[
        HotLine(FILE, 12, 600, 0.6, {"long_scoreboard": 450, "selected": 150}, text="if (a < b && c > d) x = <y>;"),
        HotLine(FILE, 30, 300, 0.3, {"barrier": 200, "mio_throttle": 100}, text="__syncthreads();"),
        HotLine("/k/other.cuh", 5, 100, 0.1, {"wait": 100}, text="other file"),
    ], total_samples=1000, user_samples=1000, digests={FILE: "x"})


def test_the_picture_has_a_heat_row_and_a_stall_bar_per_hot_line():
    svg = draw(_profile(), FILE, SOURCE)
    root = ET.fromstring(svg)  # well-formed, the source text escaped
    heat_rows = [r for r in root.iter(f"{NS}rect") if r.get("class") == "heat"]
    assert sorted(int(r.get("data-line")) for r in heat_rows) == [12, 30]  # only this file's lines
    hottest = next(r for r in heat_rows if r.get("data-line") == "12")
    assert hottest.get("fill") == heat(1.0, 1.0) and int(float(hottest.get("y"))) == 20 + 11 * 3
    for line in ("12", "30"):
        segments = [r for r in root.iter(f"{NS}rect") if r.get("class") == "stall" and r.get("data-line") == line]
        assert abs(sum(float(r.get("width")) for r in segments) - BAR_W) < 0.5
    reasons = [r.get("data-reason") for r in root.iter(f"{NS}rect") if r.get("data-line") == "12" and r.get("class") == "stall"]
    assert reasons == ["long_scoreboard", "selected"]
    labels = [t.text for t in root.iter(f"{NS}text") if t.get("class") == "hot-line"]
    assert labels[0].strip().startswith("12  60.0 %") and "<y>" in labels[0]
    assert "100 % of 1,000 samples on user lines" in root.find(f"{NS}title").text


def test_a_stale_picture_says_so():
    svg = draw(_profile(), FILE, SOURCE, stale=True)
    assert ET.fromstring(svg).find(f"{NS}title").text.startswith("STALE (the file changed since this profile)")


def test_heat_runs_from_white_to_red():
    assert heat(0.0, 0.5) == "rgb(245,235,235)" and heat(0.5, 0.5) == "rgb(245,45,20)"
    assert heat(0.1, 0.0) == "rgb(245,235,235)"  # nothing hot: no division by zero
