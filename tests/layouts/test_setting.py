"""The layout-hints setting: the server's default and values are the ones the extension contributes."""

from __future__ import annotations

import json
from pathlib import Path

from cutegen.settings import CHOICES, Settings

MANIFEST = Path(__file__).resolve().parents[2] / "vscode-client" / "package.json"


def test_layout_inlay_hints_setting_matches_the_extension():
    prop = json.loads(MANIFEST.read_text())["contributes"]["configuration"]["properties"]["cutegen.layoutInlayHints"]
    assert prop["default"] == Settings().layout_inlay_hints == "short"
    assert prop["enum"] == ["off", "short", "all"] == list(CHOICES["layout_inlay_hints"])
    settings, problems = Settings.from_dict({"layoutInlayHints": "all"})
    assert settings.layout_inlay_hints == "all" and not problems
    settings, problems = Settings.from_dict({"layoutInlayHints": "long"})
    assert settings.layout_inlay_hints == "short" and "cutegen.layoutInlayHints must be one of off, short, all" in problems[0]
