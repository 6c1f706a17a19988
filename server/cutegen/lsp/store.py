"""What has been published, so hovers and code actions answer from memory (never a recompile).

Diagnostics are kept per URI *and* per owner (the checked .cu file that produced them): a header
included by two kernels shows the union, and fixing one kernel clears only its own share.
"""

from __future__ import annotations

from lsprotocol import types

from cutegen.model import Diagnostic

Pair = tuple[types.Diagnostic, Diagnostic]


class Published:
    def __init__(self) -> None:
        self._by_uri: dict[str, dict[str, list[Pair]]] = {}

    def replace(self, owner: str, groups: dict[str, list[Pair]]) -> list[str]:
        """Store `owner`'s new diagnostics; returns every URI whose published list changed."""
        affected = {uri for uri, owners in self._by_uri.items() if owner in owners} | set(groups)
        for uri in affected:
            owners = self._by_uri.setdefault(uri, {})
            if uri in groups:
                owners[owner] = groups[uri]
            else:
                owners.pop(owner, None)
        return sorted(affected)

    def drop(self, owner: str) -> list[str]:
        return self.replace(owner, {})

    def at(self, uri: str) -> list[Pair]:
        return [pair for pairs in self._by_uri.get(uri, {}).values() for pair in pairs]
