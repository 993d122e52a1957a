"""What a sweep will run: :class:`SweepSpec` (what the user asked for) and its :class:`Unit`\\ s.

A unit is one method on one task with one seed. Tasks come from the task registry (every suite
but NewtonBench) and from NewtonBench's lab (ids ``newtonbench/...``), which is run by its
agents: methods ``agent:baseline`` (no LLM), ``agent:vanilla`` and ``agent:code`` (LLM).

``noise`` (a percentage of the target's spread) turns each task into its noisy variant, where
its suite has one: ``erbench/variants/noise/<level>/<id>`` for any scalar law,
``<id>/noise-<L>`` for SurfaceBench surfaces (1, 5, 10) and SymbolBench's ODEs (1 … 40), and
the lab's measurement noise for NewtonBench. Pairs that cannot run (a method for another kind of
task, a suite without noisy variants) are not silently dropped: :func:`plan` returns them with
the reason so the user sees them.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from .. import methods as m
from ..tasks import registry

#: NewtonBench's agents, as sweep methods.
LAB_METHODS = ("agent:baseline", "agent:vanilla", "agent:code")
LAB_PREFIX = "newtonbench"
SURFACE_NOISE = (1, 5, 10)
ODE_NOISE = (1, 5, 10, 20, 40)


class PlanError(ValueError):
    """The sweep cannot be planned; the message says why."""


@dataclass(frozen=True)
class SweepSpec:
    suites: tuple[str, ...]
    methods: tuple[str, ...]
    seeds: int = 1
    seconds: float | None = None
    noise: float | None = None  # percent
    settings: dict = field(default_factory=dict)  # extra method settings (LLM endpoint, budget …)

    def to_json(self) -> dict:
        out = asdict(self)
        out["suites"], out["methods"] = list(self.suites), list(self.methods)
        return out

    @classmethod
    def from_json(cls, data: dict) -> "SweepSpec":
        return cls(tuple(data["suites"]), tuple(data["methods"]), int(data.get("seeds", 1)),
                   data.get("seconds"), data.get("noise"), dict(data.get("settings") or {}))

    def key(self) -> str:
        """Identifies the plan, for ``--resume``: the same suites, methods, seeds, budget, noise
        and settings give the same key."""
        text = json.dumps(self.to_json(), sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class Unit:
    seq: int
    task_id: str
    method: str
    seed: int
    config: dict
    lab: bool = False

    def payload(self) -> dict:
        return asdict(self)


@dataclass
class Plan:
    units: list[Unit]
    skipped: list[str]  # "<task or suite>: <reason>", one line per reason and method
    total: int = 0  # units in the plan (also when count_only left ``units`` empty)


def _function_noise_id(task_id: str, percent: float) -> str:
    from ..tasks import variants as v

    return v.variant_id(task_id, "noise", percent / 100.0)


def _noisy_id(task: Any, percent: float) -> tuple[str | None, str | None]:
    """The id of ``task``'s noisy variant, or (None, reason)."""
    if task.kind == "function" and not task.id.startswith("erbench/variants/"):
        return _function_noise_id(task.id, percent), None
    if task.kind == "surface":
        if percent not in SURFACE_NOISE:
            return None, f"SurfaceBench has noise levels {', '.join(map(str, SURFACE_NOISE))} %"
        return f"{task.id}/noise-{int(percent)}", None
    if task.kind == "ode":
        if percent not in ODE_NOISE:
            return None, f"SymbolBench's ODEs have noise levels {', '.join(map(str, ODE_NOISE))} %"
        return f"{task.id}/noise-{int(percent)}", None
    return None, f"{task.kind} tasks have no noisy variants"


@functools.lru_cache(maxsize=None)
def _defaults(method: str) -> dict:
    """A method's default configuration (read once: building it is not free for every unit)."""
    if method in LAB_METHODS:
        from ..lab import agents

        return agents.default_config(method.split(":", 1)[1])
    return m.get_method(method).default_config()


def method_config(method: str, seed: int, seconds: float | None, settings: dict) -> dict:
    """One run's configuration: the sweep's settings the method knows, plus seed and budget."""
    defaults = _defaults(method)
    config = {k: v for k, v in settings.items() if k in defaults}
    if isinstance(config.get("llm"), dict) and isinstance(defaults.get("llm"), dict):
        config["llm"] = {**defaults["llm"], **config["llm"]}  # the endpoint over the method's sampling defaults
    if "seed" in defaults:
        config["seed"] = int(seed)
    if seconds is not None and "seconds" in defaults:
        config["seconds"] = float(seconds)
    return config


def _check_methods(methods: tuple[str, ...]) -> None:
    known = set(m.method_names()) | set(LAB_METHODS)
    for name in methods:
        if name not in known:
            raise PlanError(f"unknown method '{name}' (methods: {', '.join(sorted(known))})")


def plan(spec: SweepSpec, count_only: bool = False) -> Plan:
    """Every unit of ``spec``, in a stable order: seed, then task, then method (so a first
    result per task arrives early and a resumed sweep numbers its units the same way).
    ``count_only``: only ``total`` and ``skipped``, no units (cheap for any number of seeds)."""
    if not spec.suites:
        raise PlanError("no suite given")
    if not spec.methods:
        raise PlanError("no method given")
    if spec.seeds < 1:
        raise PlanError("--seeds must be at least 1")
    if spec.seconds is not None and not spec.seconds > 0:
        raise PlanError("--seconds must be a positive number of seconds")
    if spec.noise is not None and not spec.noise >= 0:
        raise PlanError("--noise must be a percentage ≥ 0")
    _check_methods(spec.methods)
    skipped: list[str] = []
    tasks: list[tuple[str, str, bool]] = []  # (task id, kind, lab)
    for suite in spec.suites:
        prefix = suite.strip().rstrip("/")
        matched = 0
        if prefix == LAB_PREFIX or prefix.startswith(LAB_PREFIX + "/"):
            from .. import lab

            for lab_task in lab.all_tasks():
                if lab_task.id == prefix or lab_task.id.startswith(prefix + "/"):
                    tasks.append((lab_task.id, "lab", True))
                    matched += 1
        else:
            for task in registry.all_tasks(prefix):
                matched += 1
                task_id = task.id
                if spec.noise:
                    task_id, reason = _noisy_id(task, spec.noise)
                    if task_id is None:
                        skipped.append(f"{task.id}: {reason}")
                        continue
                tasks.append((task_id, task.kind, False))
        if not matched:
            raise PlanError(f"no task matches '{suite}' (`keplerlab tasks list` and `keplerlab lab tasks` list them)")
    seen: set[str] = set()
    tasks = [t for t in tasks if not (t[0] in seen or seen.add(t[0]))]  # suites may overlap
    pairs: list[tuple[str, str, bool]] = []  # (task id, method, lab): the same for every seed
    refused: dict[tuple[str, str], int] = {}
    kinds = {name: m.get_method(name).kinds for name in spec.methods if name not in LAB_METHODS}
    for task_id, kind, is_lab in tasks:
        for method in spec.methods:
            if is_lab != (method in LAB_METHODS):
                key = (method, "lab" if is_lab else kind)
                refused[key] = refused.get(key, 0) + 1
                continue
            if not is_lab and not (kind in kinds[method] or (kind == "ode" and "function" in kinds[method])):
                refused[(method, kind)] = refused.get((method, kind), 0) + 1
                continue
            pairs.append((task_id, method, is_lab))
    for (method, kind), count in refused.items():
        what = "NewtonBench lab tasks (use agent:baseline, agent:vanilla or agent:code)" if kind == "lab" \
            else f"'{kind}' tasks"
        if method in LAB_METHODS and kind != "lab":
            what = f"'{kind}' tasks (the agents run NewtonBench lab tasks only)"
        skipped.append(f"{method}: {count} {what} skipped, the method cannot run them")
    if not pairs:
        detail = "; ".join(skipped[:5]) if skipped else "nothing to run"
        raise PlanError(f"the sweep has no runnable task × method pair ({detail})")
    total = len(pairs) * spec.seeds
    if count_only:  # the Sweep dialog counts as the user ticks: no configurations built
        return Plan([], skipped, total)
    units: list[Unit] = []
    for seed in range(spec.seeds):
        for task_id, method, is_lab in pairs:
            config = method_config(method, seed, spec.seconds, spec.settings)
            if is_lab and spec.noise:
                config["noise"] = spec.noise / 100.0
            units.append(Unit(len(units), task_id, method, seed, config, is_lab))
    return Plan(units, skipped, total)
