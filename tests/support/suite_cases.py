"""Where the suite's tests keep their problems and kernels (tests/suite/), and what each host kernel must be
reported as. The GPU stage runs on the CPU there: tests.suite.host_judge serves the GPU jobs."""

from __future__ import annotations

from tests.support.paths import ROOT

__all__ = ["EXPECTED", "GATED_KERNELS", "HANDLER", "HOST_KERNELS", "LEVEL1", "RECORDS", "ROOT", "SLOW_KERNELS"]

HERE = ROOT / "tests" / "suite"
LEVEL1 = HERE / "level1"
HOST_KERNELS = HERE / "host_kernels"
SLOW_KERNELS = HERE / "slow_kernels"
GATED_KERNELS = HERE / "gated_kernels"  # a job that runs until the test lets it finish (the Ctrl-C test)
RECORDS = HERE / "records"
HANDLER = "tests.suite.host_judge:handle"

# what each host kernel does, as the suite must report it
EXPECTED = {"19_ReLU": "mismatch", "21_Sigmoid": "timeout", "22_Tanh": "crashed", "30_Softsign": "pass",
            "31_ELU": "no-kernel", "32_HardTanh": "build-failed"}
