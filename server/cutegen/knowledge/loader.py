"""Finds and parses `cute_knowledge/`: Markdown entries with YAML front matter, snippet contexts, the
signal → advice map.

Where the data is (first that exists):
1. `$CUTEGEN_KNOWLEDGE` (a directory);
2. `cute_knowledge/` at the repository root, next to `server/` (a checkout or an editable install);
3. `<sys.prefix>/share/cutegen/cute_knowledge` (a wheel: pyproject's `[tool.setuptools.data-files]`
   installs the tree there), also under `site.USER_BASE` for `pip install --user`.
"""

from __future__ import annotations

import os
import re
import site
import sys
from dataclasses import dataclass, field
from pathlib import Path

from cutegen.knowledge.schema import Entry, Recognizer, RECOGNIZER_KEYS

ENV = "CUTEGEN_KNOWLEDGE"
SNIPPET_MARK = "// {{SNIPPET}}"
_FRONT = re.compile(r"\A---\s*\n(?P<yaml>.*?)\n---\s*\n(?P<body>.*)\Z", re.S)
_HEADING = re.compile(r"^##\s+(?P<title>.+?)\s*$", re.M)
_CODE = re.compile(r"```(?:cpp|c\+\+|cu|cuda)?\s*\n(?P<code>.*?)```", re.S)


def _safe_load(text: str):
    """yaml.safe_load, through libyaml where PyYAML has it: the pure-Python parser took 0.4 s of the knowledge base's
    load (every language server start warms it), libyaml a tenth of that; both build the same objects."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


class KnowledgeError(RuntimeError):
    """The knowledge base cannot be found or parsed; the message says which file and why."""


def knowledge_root(explicit: str | Path | None = None) -> Path:
    candidates: list[Path] = []
    if explicit:
        candidates.append(Path(explicit))
    if os.environ.get(ENV):
        candidates.append(Path(os.environ[ENV]))
    here = Path(__file__).resolve()
    candidates.append(here.parents[3] / "cute_knowledge")  # <repo>/server/cutegen/knowledge/loader.py
    for prefix in (sys.prefix, getattr(site, "USER_BASE", None) or ""):
        if prefix:
            candidates.append(Path(prefix) / "share" / "cutegen" / "cute_knowledge")
    for c in candidates:
        if (c / "errors").is_dir():
            return c.resolve()
    raise KnowledgeError("cute_knowledge/ not found (looked in: " + ", ".join(str(c) for c in candidates)
                         + f"); set {ENV} to its directory")


@dataclass
class Signal:
    name: str
    meaning: str
    advice: list[str] = field(default_factory=list)  # entry ids, best first
    stalls: dict[str, str] = field(default_factory=dict)  # stall reason (profiler/stalls.py) → advice for a hot line


@dataclass
class RawKnowledge:
    root: Path
    entries: list[Entry]
    contexts: dict[str, str]  # name → text with a SNIPPET_MARK line
    signals: dict[str, Signal]


def load_raw(root: Path) -> RawKnowledge:
    entries = [parse_entry(p, root) for p in sorted(root.rglob("*.md")) if p.parent != root]
    contexts = {p.stem: p.read_text() for p in sorted((root / "contexts").glob("*.cu"))}
    signals = _load_signals(root / "signals.yaml")
    return RawKnowledge(root, entries, contexts, signals)


def parse_entry(path: Path, root: Path | None = None) -> Entry:
    import yaml

    text = path.read_text()
    rel = str(path.relative_to(root)) if root else str(path)
    m = _FRONT.match(text)
    if not m:
        raise KnowledgeError(f"{rel}: no front matter (a '---' YAML block at the top)")
    try:
        meta = _safe_load(m["yaml"]) or {}
    except yaml.YAMLError as e:
        raise KnowledgeError(f"{rel}: front matter is not valid YAML: {e}") from e
    if not isinstance(meta, dict):
        raise KnowledgeError(f"{rel}: front matter must be a mapping")
    prelude, sections = split_sections(m["body"])
    rec_raw = meta.pop("recognize", None) or {}
    unknown = set(rec_raw) - set(RECOGNIZER_KEYS)
    if unknown:
        raise KnowledgeError(f"{rel}: unknown recognizer keys {sorted(unknown)}")
    rec = Recognizer(**{k: _strings(v, rel, k) for k, v in rec_raw.items()})
    special = {"before", "after", "when to use", "pitfalls"}
    explanation = "\n\n".join([prelude.strip()] + [f"## {t}\n\n{b.strip()}" for t, b in sections.items()
                                                     if t.lower() not in special]).strip()
    fields = dict(
        id=meta.pop("id", path.stem), kind=meta.pop("kind", ""), title=meta.pop("title", ""),
        explanation=explanation, path=rel, recognize=rec, sections=sections,
        fix_before=_code(sections.get("Before", "")), fix_after=_code(sections.get("After", "")),
        when=sections.get("When to use", "").strip(), pitfalls=sections.get("Pitfalls", "").strip(),
    )
    allowed = set(Entry.__dataclass_fields__) - set(fields)
    bad = set(meta) - allowed
    if bad:
        raise KnowledgeError(f"{rel}: unknown front-matter keys {sorted(bad)}")
    for k in ("keywords", "related", "preconditions", "signals", "corpus"):
        if k in meta:
            meta[k] = _strings(meta[k], rel, k)
    return Entry(**fields, **meta)


def split_sections(body: str) -> tuple[str, dict[str, str]]:
    parts = _HEADING.split(body)
    prelude, sections = parts[0], {}
    for i in range(1, len(parts) - 1, 2):
        sections[parts[i].strip()] = parts[i + 1]
    return prelude, sections


def _code(section: str) -> str:
    m = _CODE.search(section)
    return m["code"].rstrip() + "\n" if m else ""


def _strings(value, rel: str, key: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return [str(value)]
    if not isinstance(value, list) or not all(isinstance(v, (str, int, float)) for v in value):
        raise KnowledgeError(f"{rel}: '{key}' must be a list of strings")
    return [str(v) for v in value]


def _load_signals(path: Path) -> dict[str, Signal]:
    if not path.is_file():
        return {}
    raw = _safe_load(path.read_text()) or {}
    out = {}
    for name, spec in raw.items():
        spec = spec or {}
        stalls = spec.get("stalls") or {}
        if not isinstance(stalls, dict):
            raise KnowledgeError(f"{path.name}: '{name}.stalls' must map stall reasons to advice")
        out[name] = Signal(name, str(spec.get("meaning", "")).strip(), _strings(spec.get("advice"), path.name, name),
                           {str(r): str(a).strip() for r, a in stalls.items()})
    return out


def snippet_source(context_text: str, snippet: str) -> str:
    """A translation unit: the context with the snippet in place of its `// {{SNIPPET}}` line."""
    if SNIPPET_MARK not in context_text:
        raise KnowledgeError(f"context has no '{SNIPPET_MARK}' line")
    return context_text.replace(SNIPPET_MARK, snippet.rstrip("\n"), 1)
