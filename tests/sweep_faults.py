"""Work functions for sweep tests that fail the way workers fail (importable by spawned worker
processes, hence a module of their own). Each crashes its process the first time it sees a unit
whose seq is listed in KEPLERLAB_TEST_CRASH (comma-separated), using a marker file in
KEPLERLAB_TEST_CRASH_DIR so the retry goes through."""

from __future__ import annotations

import os
import time

from engine.sweep import work


def _crash_once(unit: dict) -> None:
    wanted = {int(s) for s in os.environ.get("KEPLERLAB_TEST_CRASH", "").split(",") if s.strip()}
    folder = os.environ.get("KEPLERLAB_TEST_CRASH_DIR", "")
    if unit["seq"] in wanted and folder:
        marker = os.path.join(folder, f"crashed-{unit['seq']}")
        if not os.path.exists(marker):
            open(marker, "w").close()
            time.sleep(1.0)  # die while running, as a killed worker does
            os._exit(9)  # as if killed: no clean-up, no result


def pool_crash_once(unit: dict, stop_path: str, threads: int | None = None) -> dict:
    open(work.start_marker(stop_path, unit["seq"]), "w").close()  # started, as run_unit_file_stop says
    _crash_once(unit)
    return work.run_unit_file_stop(unit, stop_path, threads)


def dask_crash_once(unit: dict, event_name: str, threads: int | None = None) -> dict:
    from distributed import get_worker

    worker = get_worker()  # announce the start first, as run_unit_dask does, then crash
    worker.log_event("keplerlab-sweep", {"seq": unit["seq"], "token": unit.get("token"), "worker": worker.address,
                                         "what": "started"})
    _crash_once(unit)
    return work.run_unit_dask(unit, event_name, threads)
