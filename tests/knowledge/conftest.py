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
def arch_builders(builder, build_state):
    """{None: the session's default builder (shared with the corpus tests, so its cache is too), 'sm_90': ...};
    every arch's builder keeps its cache in the shared, persistent `build_state`."""
    return {None: builder, "sm_90a": builder, "_state": build_state}
