"""The Ray backend on a real local Ray cluster started by the test, with two logical GPUs declared: each GPU job
runs in a Ray actor that asked for num_gpus=1, and the jobs land on both. (CI: pip install '.[cluster]'.)"""

from __future__ import annotations

import os
import sys

import pytest

from cutegen import records
from cutegen.suite.runner import run_suite
from tests.support.suite_cases import HOST_KERNELS, LEVEL1, SLOW_KERNELS

ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install '.[cluster]'")

pytestmark = pytest.mark.slow  # a Ray cluster takes 10-20 s to start on two cores


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, num_gpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}})
    yield
    ray.shutdown()


def test_jobs_land_on_both_logical_gpus(cluster, make_config):
    config = make_config(kernels=SLOW_KERNELS, ray="auto", gpus=None)
    summary = run_suite([LEVEL1 / "30_Softsign.py", LEVEL1 / "22_Tanh.py"], config)
    assert {r["name"]: r["verdict"] for r in summary.rows} == {"30_Softsign": "pass", "22_Tanh": "pass"}
    gpus = {r["gpu"] for r in summary.rows}
    assert len(gpus) == 2  # two actors, one logical GPU each, busy at the same time
    for r in summary.rows:
        rec = records.read(r["record"])
        assert rec.details["visible_devices"] == r["gpu"].split(":")[1]  # Ray gave the actor exactly its GPU


def test_a_crash_and_a_hang_on_ray_are_verdicts(cluster, make_config):
    config = make_config(kernels=HOST_KERNELS, ray="auto", gpus=None, timeout=8.0)
    summary = run_suite([LEVEL1 / "22_Tanh.py", LEVEL1 / "21_Sigmoid.py", LEVEL1 / "30_Softsign.py"], config)
    by = {r["name"]: r for r in summary.rows}
    assert by["22_Tanh"]["verdict"] == "crashed" and by["22_Tanh"]["retried"] is True
    assert by["21_Sigmoid"]["verdict"] == "timeout"
    assert by["30_Softsign"]["verdict"] == "pass"  # the cluster recovered: fresh actors took over
