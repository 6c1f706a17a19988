"""Where the checkout's parts are, for tests and benches."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
ENGINE = ROOT / "server" / "cutegen"
