"""Fixtures for the knowledge-base tests: the base itself and one check-tier Builder per target arch."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def kb():
    pytest.importorskip("yaml")
    pytest.importorskip("bm25s")
    from cutegen.knowledge import KnowledgeBase

    return KnowledgeBase.load()


@pytest.fixture(scope="session")
def arch_builders(builder, tmp_path_factory):
    """{None: the session's default builder (shared with the corpus tests, so its cache is too), 'sm_90': ...}."""
    return {None: builder, "sm_90a": builder, "_state": tmp_path_factory.mktemp("kb-arch-state")}
