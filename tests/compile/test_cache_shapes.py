"""A build-cache outcome.json of any other shape is a miss (issue 53), and the shape it is checked against is the
Builder's CompileOutcome."""

from __future__ import annotations

import json
from dataclasses import asdict, fields
from pathlib import Path

import pytest

from cutegen.compile.builder import CompileOutcome
from cutegen.compile.cache import OUTCOME_REQUIRED, OUTCOME_TYPES, BuildCache

GOOD = asdict(CompileOutcome(returncode=0, ptxas_ok=True, log="", command=["nvcc"], seconds=1.5, artifact=None))


def test_the_checked_shape_is_the_outcomes():
    assert set(OUTCOME_TYPES) == {f.name for f in fields(CompileOutcome)}
    assert set(OUTCOME_REQUIRED) == {f.name for f in fields(CompileOutcome) if f.default is f.default_factory}


@pytest.mark.parametrize("shape", [[], {}, {"schema": 99}, "x", 3, None, {**GOOD, "returncode": "0"},
                                   {**GOOD, "command": "nvcc"}, {**GOOD, "command": [1]}, {**GOOD, "extra": 1},
                                   {**GOOD, "artifact": "/a\u0000b"}, {**GOOD, "artifact": "/nowhere/x.ptx"}])
def test_a_wrong_shape_is_a_miss(tmp_path: Path, shape):
    cache = BuildCache(tmp_path)
    cache.put("abcd", GOOD)
    assert cache.get("abcd") == GOOD
    (cache.entry("abcd") / "outcome.json").write_text(json.dumps(shape))
    assert cache.get("abcd") is None
