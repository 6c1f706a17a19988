"""The type tier: errors while typing, from clang's front end on the unsaved text (checker.py), parsed in a child
process (clang_parse.py) with what CUDA 13 lacks for clang (shims/).

A package of its own, not under compile/: nothing here changes what an nvcc build means (the test suite keys its
build cache on compile/'s code)."""

from cutegen.typecheck.checker import FAILED, SOURCE, TIER, TypeChecker, TypeTierUnavailable, leading_includes

__all__ = ["FAILED", "SOURCE", "TIER", "TypeChecker", "TypeTierUnavailable", "leading_includes"]
