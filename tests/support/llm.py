"""What tests of the LLM paths share (tests/agent, tests/sandbox, tests/suite): the test key, settings for the
scripted endpoint, and the check that the key was written nowhere. The `scripted` fixture is tests/conftest.py's."""

from __future__ import annotations

from pathlib import Path

from tests.support.server_env import LLM_KEY as KEY, LLM_KEY_ENV as KEY_ENV  # the language server's env has it

__all__ = ["KEY", "KEY_ENV", "llm_settings", "no_key_anywhere"]


def llm_settings(url: str, **extra):
    from cutegen.settings import Settings

    base = dict(llm_base_url=url, llm_model="scripted", llm_api_key_env=KEY_ENV, llm_timeout=2.0, llm_retries=2,
                max_rounds=3)
    base.update(extra)
    return Settings(**base)


def no_key_anywhere(folder: Path) -> None:
    for f in Path(folder).rglob("*"):
        if f.is_file():
            assert KEY.encode() not in f.read_bytes(), f"the API key leaked into {f}"
