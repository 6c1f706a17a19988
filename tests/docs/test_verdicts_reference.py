"""docs/reference/verdicts.md explains every verdict the code can produce, each in its producer's section."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutegen.agent.candidates import CandidateVerdict
from cutegen.harness.verdicts import Verdict
from cutegen.profiler.signals import ProfileVerdict, SanitizeVerdict

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "verdicts.md"


def _sections() -> dict[str, str]:
    """The page's `## ...` sections by the enum their heading names."""
    sections = {}
    for part in PAGE.read_text().split("\n## ")[1:]:
        heading, _, body = part.partition("\n")
        for enum in (Verdict, CandidateVerdict, ProfileVerdict, SanitizeVerdict):
            if f"`{enum.__name__}`" in heading:
                sections[enum.__name__] = body
    return sections


@pytest.mark.parametrize("enum", [Verdict, CandidateVerdict, ProfileVerdict, SanitizeVerdict],
                         ids=lambda e: e.__name__)
def test_every_verdict_has_a_row_saying_what_it_means_and_what_to_do(enum):
    body = _sections().get(enum.__name__)
    assert body is not None, f"{PAGE.name} has no section whose heading names `{enum.__name__}`"
    rows = {line.split("|")[1].strip(): line for line in body.splitlines() if line.startswith("| `")}
    missing = [v.value for v in enum if f"`{v.value}`" not in rows]
    assert not missing, f"{PAGE.name}: add a row for {missing} under the `{enum.__name__}` section"
    unknown = [name for name in rows if name.strip("`") not in {v.value for v in enum}]
    assert not unknown, f"{PAGE.name} lists {unknown}, which `{enum.__name__}` does not produce"
    for name, row in rows.items():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        assert len(cells) == 3 and all(cells), f"{name}: a row needs a meaning and what to do: {row}"
