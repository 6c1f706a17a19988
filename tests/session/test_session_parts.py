"""What a build lacks for an action is asked of the session (the adapters import no engine module by name): a
build without the harness or the profiler names the missing part instead of failing with a traceback."""

from __future__ import annotations

import sys

import pytest

from cutegen.session import Session


def test_a_whole_build_lacks_nothing():
    session = Session()
    assert [session.missing_part(a) for a in ("test", "profile", "sanitize")] == [None, None, None]


@pytest.mark.parametrize("action, module", [("test", "cutegen.harness.run"), ("profile", "cutegen.profiler.profile"),
                                            ("sanitize", "cutegen.profiler.sanitizer")])
def test_a_build_without_a_part_names_it(monkeypatch, action, module):
    monkeypatch.setitem(sys.modules, module, None)  # what Python does for a module that is not there to import
    assert Session().missing_part(action) == module


def test_an_unknown_action_is_a_bug_not_a_missing_part():
    with pytest.raises(ValueError, match="no such action"):
        Session().missing_part("bench")
