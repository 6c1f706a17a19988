"""The Ray backend: the same GPU jobs as the local backend, each served by a Ray actor that asks for
`num_gpus=1` (Ray sets CUDA_VISIBLE_DEVICES in it), one actor per GPU of the cluster.

Compiles stay on the driver's CPU cores; the kernel libraries, problems and --out are read by path on the nodes,
so a multi-node cluster needs them on a shared filesystem (the usual SLURM home or a KubeRay volume). A hang is
killed at the timeout (the actor is replaced); an actor that dies under a job is replaced and the job retried once.
Ray is an optional dependency: `pip install cutegen[cluster]`."""

from __future__ import annotations

import os
import sys
from typing import Callable

from cutegen.suite.gpus import Backend


class _Actor:
    """One GPU of the cluster; `handler` serves the requests in the actor's own process."""

    def __init__(self, handler: str):
        import ray

        from cutegen.suite.gpus import resolve, warm_up

        self.serve = resolve(handler)
        warm_up()  # before the actor reports ready (see RayBackend._new), so no job's timeout pays for it
        ids = ray.get_gpu_ids()
        self.gpu = f"{ray.get_runtime_context().get_node_id()[:8]}:{','.join(str(i) for i in ids)}"

    def name(self) -> str:
        return self.gpu

    def call(self, request: dict) -> dict:
        reply = self.serve(request)
        reply["gpu"] = self.gpu
        return reply


class _Slot:
    def __init__(self, actor, gpu: str):
        self.actor, self.gpu = actor, gpu


class RayBackend(Backend):
    name = "ray"

    def __init__(self, address: str, handler: str, on_event: Callable | None = None, *, gpus: int | None = None):
        try:
            import ray
        except ImportError:
            raise RuntimeError("--ray needs Ray: pip install 'cutegen[cluster]' (or pip install ray)") from None
        self.ray, self.handler = ray, handler
        self._owns_ray = not ray.is_initialized()
        if self._owns_ray:
            ray.init(address=None if address == "local" else address, log_to_driver=False,
                     runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}})
        count = gpus if gpus is not None else int(ray.cluster_resources().get("GPU", 0))
        self._remote = ray.remote(num_gpus=1, max_restarts=0)(_Actor)
        super().__init__([self._new() for _ in range(count)], on_event)

    def _new(self) -> _Slot:
        actor = self._remote.remote(self.handler)
        return _Slot(actor, self.ray.get(actor.name.remote()))

    def _run(self, slot: _Slot, request: dict, timeout: float) -> dict:
        ray = self.ray
        ref = slot.actor.call.remote(request)
        try:
            return ray.get(ref, timeout=timeout)
        except ray.exceptions.GetTimeoutError:
            self._kill(slot)
            return {"verdict": "timeout", "message": f"no result within {timeout:.0f} s: the kernel hangs (or is far "
                    "too slow); its Ray actor was killed and replaced"}
        except ray.exceptions.RayActorError as e:
            self._kill(slot)
            return {"verdict": "crashed", "message": f"the Ray actor serving the job died: {str(e).splitlines()[0]}"}

    def _kill(self, slot: _Slot) -> None:
        try:
            self.ray.kill(slot.actor)
        except Exception:
            pass
        if self.closed.is_set():
            return
        fresh = self._new()
        slot.actor, slot.gpu = fresh.actor, fresh.gpu

    def _replace(self, slot: _Slot) -> _Slot:
        return slot  # _run already put a fresh actor in the slot

    def close(self) -> None:
        super().close()
        for s in self._all:
            try:
                self.ray.kill(s.actor)
            except Exception:
                pass
        if self._owns_ray:
            self.ray.shutdown()
