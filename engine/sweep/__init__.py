"""Benchmark sweeps: every task × method × seed of one or more suites, on a local process pool
or a Dask cluster, recorded in the run store and resumable (issue 8).

:mod:`.plan` turns what the user asked for into units of work, :mod:`.work` runs one unit
headless wherever it lands, :mod:`.backends` hands units to a process pool or to Dask, and
:mod:`.runner` drives a sweep and records it. Engine code: no Qt.
"""

from .plan import LAB_METHODS, PlanError, SweepSpec, Unit, plan
from .runner import (SweepEnded, SweepPlanned, UnitDispatched, UnitDone, UnitRetried, UnitStarted, run_sweep,
                     sweep)

__all__ = [
    "LAB_METHODS", "PlanError", "SweepSpec", "Unit", "plan", "sweep", "run_sweep", "SweepPlanned",
    "UnitDispatched", "UnitStarted", "UnitDone", "UnitRetried", "SweepEnded",
]
