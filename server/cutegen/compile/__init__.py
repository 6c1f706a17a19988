"""Build tiers: `check` (front end + device code to PTX, then ptxas for resources), `build` (the loadable .so) and
`probe` (the layout probe's front-end compile)."""

from cutegen.compile.builder import Builder, CompileOutcome, Tier

__all__ = ["Builder", "CompileOutcome", "Tier"]
