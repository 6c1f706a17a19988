"""Issue 54: errors while typing are on by default, and the setting's text states what that costs at most."""

from __future__ import annotations

import json
from pathlib import Path

from cutegen.settings import Settings

MANIFEST = Path(__file__).resolve().parents[2] / "vscode-client" / "package.json"


def test_check_on_type_is_on_by_default_with_its_caps_stated():
    prop = json.loads(MANIFEST.read_text())["contributes"]["configuration"]["properties"]["cutegen.checkOnType"]
    assert prop["default"] is True and Settings().check_on_type is True
    text = prop["markdownDescription"]
    assert "one parse at a time" in text and "one header-set build at a time" in text and "GB" in text, text
