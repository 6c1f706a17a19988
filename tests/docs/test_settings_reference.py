"""docs/reference/settings.md is generated from the code's settings table: a stale page fails here."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import fields
from pathlib import Path

from cutegen.settings import Settings, editor_key

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("settings_reference", ROOT / "scripts" / "settings_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_settings_page_is_what_the_code_generates():
    generator = _generator()
    page = generator.PAGE
    assert page.is_file(), f"{page.relative_to(ROOT)} is missing: run `{generator.COMMAND}`"
    assert page.read_text() == generator.render(), (
        f"{page.relative_to(ROOT)} is stale (a setting, default, choice or description changed): "
        f"run `{generator.COMMAND}` and commit the page")


def test_every_setting_of_the_server_and_the_extension_has_its_own_heading():
    text = _generator().render()
    contributed = json.loads((ROOT / "vscode-client" / "package.json").read_text())["contributes"]["configuration"]
    keys = {editor_key(f.name) for f in fields(Settings)} | set(contributed["properties"])
    missing = [key for key in sorted(keys) if f"### `{key}`" not in text]
    assert not missing, missing


def test_a_new_setting_appears_with_its_default_and_choices(monkeypatch):
    """What another change adds to the table shows up without touching the generator."""
    import dataclasses

    import cutegen.settings as settings_module

    generator = _generator()
    extended = dataclasses.make_dataclass("Settings", [("optimize_objective", str, dataclasses.field(default="time"))],
                                          bases=(Settings,))
    monkeypatch.setattr(generator, "Settings", extended)
    monkeypatch.setitem(settings_module.CHOICES, "optimize_objective", ("time", "energy"))
    text = generator.render()
    assert "### `cutegen.optimizeObjective`" in text
    entry = text.split("### `cutegen.optimizeObjective`", 1)[1]
    assert 'default `"time"` · one of `time`, `energy`' in entry
