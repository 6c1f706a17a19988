"""Build tiers: `check` (front end + device code to PTX, then ptxas for resources) and `build` (the loadable .so)."""

from cutegen.build.builder import Builder, Tier

__all__ = ["Builder", "Tier"]
