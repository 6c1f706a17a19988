"""The corpus of broken and clean kernels (tests/corpus) and the annotations each one carries."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.paths import CORPUS


class CorpusCase:
    """A corpus kernel with its annotations: `// expect-root:`, `// BUG`, `// BUG-ALT`, `// cutegen-arch:`."""

    def __init__(self, path: Path):
        self.path = path
        self.text = path.read_text()
        lines = self.text.splitlines()
        self.bug_lines = {i for i, line in enumerate(lines, 1) if re.search(r"//\s*BUG\s*$", line)}
        self.alt_lines = {i for i, line in enumerate(lines, 1) if re.search(r"//\s*BUG-ALT\s*$", line)}
        self.expect_root = self._header("expect-root")
        self.expect_warning = self._header("expect-warning")
        self.arch = self._header("cutegen-arch")

    def _header(self, key: str) -> str | None:
        m = re.search(rf"^//\s*{key}:\s*(.+?)\s*$", self.text, re.M)
        return m.group(1) if m else None

    def __repr__(self):
        return self.path.stem


def corpus(kind: str) -> list[CorpusCase]:
    return [CorpusCase(p) for p in sorted((CORPUS / kind).glob("*.cu"))]
