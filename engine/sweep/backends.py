"""Where a sweep's units run: a local process pool, or a Dask distributed cluster.

Both offer the same small interface to :mod:`.runner`: ``submit(unit) -> future``,
``wait(futures, timeout) -> done``, ``stop()`` (ask running units to end as cancelled),
``reset()`` (clear that request before the next sweep),
``started()`` (units a worker has begun since the last call) and ``close()``. A future's ``result()``
is :func:`engine.sweep.work.run_unit`'s dict; a lost worker shows as :class:`WorkerLost`.

* :class:`LocalPool` — ``concurrent.futures.ProcessPoolExecutor`` with the *spawn* start method
  (a forked copy of a process that runs Qt or worker threads is not safe). Workers ignore
  SIGINT: Ctrl-C in a terminal reaches the whole process group, and the coordinator, not each
  worker, decides how a sweep stops. A worker announces a start with a marker file next to the
  stop file (written only once it has seen no stop request). A worker that dies breaks the
  pool; the units it held are reported lost and the pool is started again.
* :class:`DaskBackend` — ``distributed.Client`` on a ``LocalCluster`` it starts (``--workers
  N``, loopback only, one task per worker, no dashboard) or on an existing scheduler
  (``--scheduler tcp://host:port``; the user starts ``dask scheduler`` and ``dask worker`` with
  Kepler Lab installed on every machine). Dask itself reschedules the task of a lost worker
  (up to the scheduler's ``allowed-failures``); each start is announced on the
  ``keplerlab-sweep`` event topic, so a second start of the same unit records the lost attempt,
  and ``KilledWorker`` after the last one is reported as lost.
"""

from __future__ import annotations

import os
import queue
import shutil
import signal
import tempfile
import threading
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor
from concurrent.futures import wait as futures_wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from . import work


class WorkerLost(RuntimeError):
    """The process or machine running a unit went away before it returned. ``started`` is
    False for a unit that was only waiting in the queue of a pool that broke: it is queued
    again without counting an attempt."""

    def __init__(self, message: str, started: bool = True):
        super().__init__(message)
        self.started = started


class BackendLost(RuntimeError):
    """The cluster itself went away (the Dask scheduler's connection was lost): nothing more can
    run there; the sweep ends and ``--resume`` runs the rest."""


def _worker_init() -> None:
    """A pool worker: Ctrl+C is the coordinator's to handle, and the worker ends within a second
    of its coordinator's death (``kill -9``, out of memory) instead of running its unit on for
    nobody: the unit's run goes to a store only the coordinator would have read."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(PARENT_POLL)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


#: How often (seconds) a local pool's worker checks that its coordinator still lives.
PARENT_POLL = 1.0


class LocalPool:
    kind = "local"

    def __init__(self, workers: int = 1, threads: int | None = None, work_fn=None):
        import multiprocessing

        self.workers = max(1, int(workers))
        self.threads = threads or max(1, (os.cpu_count() or 1) // self.workers)
        self.work_fn = work_fn or work.run_unit_file_stop
        self._context = multiprocessing.get_context("spawn")
        self._folder = tempfile.mkdtemp(prefix="keplerlab-sweep-")
        self._stop_path = os.path.join(self._folder, "stop")
        self._pool = self._new_pool()
        self._futures: dict[Any, dict] = {}
        self._announced: set[int] = set()  # seqs whose start started() has reported

    def describe(self) -> str:
        return f"local process pool, {self.workers} worker(s)"

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(self.workers, mp_context=self._context, initializer=_worker_init)

    def submit(self, unit: dict):
        try:
            future = self._pool.submit(self.work_fn, unit, self._stop_path, self.threads)
        except BrokenProcessPool:  # a worker died since the last submission: start afresh
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._new_pool()
            future = self._pool.submit(self.work_fn, unit, self._stop_path, self.threads)
        self._futures[future] = unit
        return future

    def wait(self, futures, timeout: float):
        done, _ = futures_wait(list(futures), timeout=timeout, return_when=FIRST_COMPLETED)
        if any(isinstance(f.exception(), BrokenProcessPool) for f in done):
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._new_pool()
        return done

    def outcome(self, future) -> dict:
        unit = self._futures.pop(future, None)
        if unit is not None:
            self._announced.discard(unit["seq"])  # a retried unit is announced again when it restarts
        exc = future.exception()
        if isinstance(exc, BrokenProcessPool):
            started = False
            if unit is not None:
                marker = work.start_marker(self._stop_path, unit["seq"])
                started = os.path.exists(marker)
                if started:
                    os.remove(marker)
            raise WorkerLost("a worker process ended unexpectedly (it was killed or crashed)", started)
        return future.result()

    def started(self) -> list[tuple[int, str, bool]]:
        """(seq, worker, False) for each submitted unit whose start marker appeared since the
        last call (a pool never starts a submission twice: a lost unit is submitted again)."""
        out = []
        for unit in list(self._futures.values()):
            seq = unit["seq"]
            if seq in self._announced:
                continue
            try:
                with open(work.start_marker(self._stop_path, seq)) as marker:
                    worker = marker.read().strip() or "local"
            except FileNotFoundError:
                continue
            self._announced.add(seq)
            out.append((seq, worker, False))
        return out

    def stop(self) -> None:
        with open(self._stop_path, "w"):
            pass

    def reset(self) -> None:
        """Clear a stop request and the start markers (a new sweep on the same pool)."""
        self._announced.clear()
        for name in os.listdir(self._folder):
            try:
                os.remove(os.path.join(self._folder, name))
            except FileNotFoundError:
                pass

    def close(self, kill: bool = False) -> None:
        if kill:
            for process in list(getattr(self._pool, "_processes", {}).values()):
                process.kill()
        self._pool.shutdown(wait=not kill, cancel_futures=True)
        shutil.rmtree(self._folder, ignore_errors=True)


class DaskBackend:
    kind = "dask"

    def __init__(self, workers: int | None = None, scheduler: str | None = None, threads: int | None = None,
                 work_fn=None, connect_timeout: float = 20.0):
        import dask
        from distributed import Client, Event, LocalCluster

        self.work_fn = work_fn or work.run_unit_dask
        self._cluster = None
        self.threads = threads
        try:
            if scheduler:
                self.client = Client(scheduler, timeout=connect_timeout)
                self.address = scheduler
            else:
                n = max(1, int(workers or 1))
                with dask.config.set({"distributed.worker.daemon": False,
                                      "distributed.scheduler.allowed-failures": 2}):
                    self._cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                                 host="127.0.0.1", dashboard_address=None,
                                                 silence_logs=40)  # logging.ERROR
                self.client = Client(self._cluster)
                self.address = self._cluster.scheduler_address
                self.threads = threads or max(1, (os.cpu_count() or 1) // n)
        except (OSError, ValueError) as exc:  # unreachable, timed out, or not an address
            if self._cluster is not None:
                self._cluster.close()
            where = f"the Dask scheduler at {scheduler}" if scheduler else "a local Dask cluster"
            raise ConnectionError(f"cannot reach {where}: {exc}") from None
        self.workers = len(self.client.scheduler_info().get("workers", {}))
        self._event_name = f"keplerlab-stop-{uuid.uuid4().hex[:8]}"
        self._stop_event = Event(self._event_name, client=self.client)
        self._starts: queue.Queue = queue.Queue()
        self._tokens: set = set()
        self.client.subscribe_topic("keplerlab-sweep", lambda event: self._starts.put(event[1]))

    def describe(self) -> str:
        where = "local Dask cluster" if self._cluster is not None else "Dask cluster"
        return f"{where} at {self.address}, {self.workers} worker(s)"

    def submit(self, unit: dict):
        unit = {**unit, "token": uuid.uuid4().hex[:12]}  # tells a rescheduled start from a new submission
        return self.client.submit(self.work_fn, unit, self._event_name, self.threads,
                                  key=f"keplerlab-unit-{uuid.uuid4().hex[:10]}-{unit['seq']}", pure=False)

    def wait(self, futures, timeout: float):
        from concurrent.futures import CancelledError

        from distributed import wait as dask_wait
        from distributed.client import FuturesCancelledError

        try:
            done, _ = dask_wait(list(futures), timeout=timeout, return_when="FIRST_COMPLETED")
        except TimeoutError:
            return set()
        except (FuturesCancelledError, CancelledError) as exc:
            raise BackendLost(f"the Dask scheduler's connection was lost ({str(exc).splitlines()[0]})") from None
        return done

    @staticmethod
    def outcome(future) -> dict:
        from concurrent.futures import CancelledError

        from distributed.client import FuturesCancelledError
        from distributed.scheduler import KilledWorker

        try:
            return future.result()
        except KilledWorker as exc:
            raise WorkerLost(f"the Dask workers running it were lost ({exc})") from None
        except (FuturesCancelledError, CancelledError) as exc:
            raise BackendLost(f"the Dask scheduler's connection was lost ({str(exc).splitlines()[0]})") from None

    def started(self) -> list[tuple[int, str, bool]]:
        """(seq, worker, again) for each unit start announced since the last call; ``again`` when
        Dask started the same submission a second time, after losing the worker that had it."""
        out = []
        while True:
            try:
                message = self._starts.get_nowait()
            except queue.Empty:
                return out
            if isinstance(message, dict) and message.get("what") == "started":
                token = message.get("token")
                again = token in self._tokens
                self._tokens.add(token)
                out.append((int(message["seq"]), str(message.get("worker")), again))

    def stop(self) -> None:
        try:
            self._stop_event.set()
        except Exception:  # the scheduler is gone; nothing is running there any more
            pass

    def reset(self) -> None:
        self._stop_event.clear()

    def close(self, kill: bool = False) -> None:
        try:
            self.client.unsubscribe_topic("keplerlab-sweep")
        except Exception:
            pass
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()


def make_backend(workers: int | None = None, scheduler: str | None = None, work_fn=None,
                 connect_timeout: float = 20.0):
    """``--scheduler`` → Dask on that cluster; ``--workers N`` → a local Dask cluster of N
    workers; neither → the local process pool with one worker."""
    if scheduler:
        return DaskBackend(scheduler=scheduler, work_fn=work_fn, connect_timeout=connect_timeout)
    if workers:
        return DaskBackend(workers=workers, work_fn=work_fn)
    return LocalPool(1, work_fn=work_fn)
