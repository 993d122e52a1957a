"""``keplerlab bench``: a sweep from the command line, with a progress bar (rich) on stderr."""

from __future__ import annotations

import argparse
import math
import re
import signal
import sys
import time
from typing import Any

from ..store import RunStore, StoreError
from .plan import PlanError, SweepSpec
from .runner import (SweepContext, SweepEnded, SweepPlanned, UnitDispatched, UnitDone, UnitRetried, eta, sweep)


#: A Dask scheduler address: protocol, host and port.
SCHEDULER = re.compile(r"^(tcp|tls|ucx|ws|wss)://[^\s:/]+:\d{1,5}$")


def add_parser(sub: Any) -> None:
    bench = sub.add_parser(
        "bench",
        help="run methods over whole suites (every task × method × seed), locally or on a Dask cluster",
        description="Run every task of the given suites with every given method and seed. Results go to "
                    "the run store; `keplerlab report` tabulates them beside the papers' numbers.",
    )
    bench.add_argument("--suite", required=True, metavar="PREFIX[,PREFIX]",
                       help="task id prefixes, e.g. llmsrbench/lsr-synth/material_science or newtonbench/m0_gravity")
    bench.add_argument("--method", required=True, metavar="M[,M]",
                       help="methods, e.g. gp,sindy; NewtonBench lab tasks take agent:baseline, agent:vanilla, agent:code")
    bench.add_argument("--seconds", type=float, metavar="N", help="time budget of each run (default: the method's)")
    bench.add_argument("--seeds", type=int, default=1, metavar="K", help="seeds 0 … K−1 (default 1)")
    bench.add_argument("--noise", type=float, metavar="L",
                       help="noise level in percent: each task's noisy variant (SurfaceBench 1/5/10, ODEs 1/5/10/20/40)")
    where = bench.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, metavar="N", help="start a local Dask cluster of N worker processes")
    where.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                       help="use a running Dask cluster (`dask scheduler`, `dask worker` on each machine)")
    bench.add_argument("--db", help="run store path (default: the user data directory)")
    bench.add_argument("--resume", nargs="?", const=True, default=False, metavar="SWEEP",
                       help="continue the latest sweep with the same plan (or the sweep with this id): "
                            "finished units are skipped, interrupted ones run again")
    bench.add_argument("--retry-failed", action="store_true",
                       help="with --resume: also run again the units whose run failed")
    bench.add_argument("--json", action="store_true", help="print the sweep's result as one JSON object")
    bench.add_argument("--quiet", action="store_true", help="no progress on stderr")
    llm = bench.add_argument_group("LLM methods and agents")
    llm.add_argument("--llm-base-url", metavar="URL")
    llm.add_argument("--llm-model", metavar="NAME")
    llm.add_argument("--llm-api-key-env", metavar="VAR")
    llm.add_argument("--max-llm-calls", type=int, metavar="N")
    llm.add_argument("--llm-cache", choices=("record", "replay", "off"))
    bench.set_defaults(func=cmd_bench)


def _settings(args: argparse.Namespace) -> dict:
    from ..cli import UsageError

    settings: dict[str, Any] = {}
    llm: dict[str, Any] = {}
    if args.llm_base_url is not None:
        if not args.llm_base_url.startswith(("http://", "https://")):
            raise UsageError("--llm-base-url must be an http:// or https:// URL")
        llm["base_url"] = args.llm_base_url
    if args.llm_model is not None:
        llm["model"] = args.llm_model
    if args.llm_api_key_env is not None:
        llm["api_key_env"] = args.llm_api_key_env
    if llm:
        settings["llm"] = llm
    if args.max_llm_calls is not None:
        if args.max_llm_calls < 1:
            raise UsageError("--max-llm-calls must be at least 1")
        settings["max_llm_calls"] = args.max_llm_calls
    if args.llm_cache is not None:
        settings["llm_cache"] = args.llm_cache
    return settings


def spec_from_args(args: argparse.Namespace) -> SweepSpec:
    from ..cli import UsageError

    if args.seconds is not None and (not math.isfinite(args.seconds) or args.seconds <= 0):
        raise UsageError("--seconds must be a positive, finite number of seconds")
    if args.noise is not None and (not math.isfinite(args.noise) or args.noise < 0):
        raise UsageError("--noise must be a percentage ≥ 0")
    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.scheduler is not None and not SCHEDULER.match(args.scheduler.strip()):
        raise UsageError(f"--scheduler must be a Dask scheduler address such as tcp://host:8786, not '{args.scheduler}'")
    if args.retry_failed and not args.resume:
        raise UsageError("--retry-failed goes with --resume")
    suites = tuple(s.strip() for s in args.suite.split(",") if s.strip())
    methods = tuple(s.strip() for s in args.method.split(",") if s.strip())
    return SweepSpec(suites, methods, args.seeds, args.seconds, args.noise or None, _settings(args))


class _Progress:
    """Progress on stderr: a rich progress bar on a terminal, one line per unit otherwise."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.bar = None
        self.task = None
        self.total = 0
        self.done = 0
        self.durations: list[float] = []
        self.workers = 1
        self.started = time.monotonic()

    def planned(self, event: SweepPlanned, workers: int) -> None:
        from ..cli import _err

        self.total, self.workers = event.todo, max(1, workers)
        if self.quiet:
            return
        verb = "resuming" if event.resumed else "sweep"
        _err(f"{verb} {event.sweep_id}: {event.todo} run(s) to do of {event.total}"
             + (f" ({event.done_before} done before)" if event.done_before else "") + f" on {event.backend}")
        for line in event.skipped[:10]:
            _err(f"  skipped: {line}")
        if len(event.skipped) > 10:
            _err(f"  … and {len(event.skipped) - 10} more skipped")
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)

            self.bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                console=Console(stderr=True), transient=False)
            self.bar.start()
            self.task = self.bar.add_task("sweep", total=event.todo)

    def unit_done(self, event: UnitDone) -> None:
        from ..cli import _err, _fmt

        self.done += 1
        if event.seconds:
            self.durations.append(event.seconds)
        if self.quiet:
            return
        line = f"{event.task_id} · {event.method} · seed {event.seed}: {event.status}"
        if event.nmse is not None:
            line += f", NMSE {_fmt(event.nmse)}"
        if event.error and event.status != "finished":
            line += f" ({event.error.splitlines()[0][:160]})"
        if self.bar is not None:
            self.bar.console.print(line)
            self.bar.update(self.task, advance=1, description=event.task_id.rsplit("/", 1)[-1])
        else:
            left = eta(self.durations, self.total - self.done, self.workers)
            when = f", ETA {left:.0f} s" if left is not None else ""
            _err(f"[{self.done}/{self.total}, {time.monotonic() - self.started:.0f} s{when}] {line}")

    def note(self, text: str) -> None:
        from ..cli import _err

        if self.quiet:
            return
        if self.bar is not None:
            self.bar.console.print(text)
        else:
            _err(text)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def cmd_bench(args: argparse.Namespace) -> int:
    from ..cli import EXIT_FAILURE, EXIT_OK, UsageError, _dump, _err
    from .backends import make_backend

    spec = spec_from_args(args)
    context = SweepContext()
    progress = _Progress(args.quiet)

    def on_interrupt(signum, frame):
        if context.cancelled:
            progress.note("stopping now: running units are abandoned (marked interrupted)")
        else:
            progress.note("stopping… running units end with their best model; Ctrl-C again to stop at once")
        context.cancel()

    try:
        store = RunStore(args.db)
    except StoreError as exc:
        _err(f"error: {exc}")
        return EXIT_FAILURE
    backend = None
    ended: SweepEnded | None = None
    units: list[dict] = []
    previous = signal.getsignal(signal.SIGINT)
    try:
        from .plan import plan

        plan(spec, count_only=True)  # a bad plan is a usage error before any cluster is started
        try:  # Ctrl-C here ends the command at once (KeyboardInterrupt): nothing has run yet
            backend = make_backend(args.workers, args.scheduler.strip() if args.scheduler else None)
        except (ConnectionError, OSError, TimeoutError) as exc:
            _err(f"error: {exc}")
            return EXIT_FAILURE
        except KeyboardInterrupt:
            _err("stopped before the sweep started")
            return 130
        signal.signal(signal.SIGINT, on_interrupt)
        for event in sweep(spec, store, backend, resume=args.resume, retry_failed=args.retry_failed,
                           context=context):
            if isinstance(event, SweepPlanned):
                progress.planned(event, event.workers)
            elif isinstance(event, UnitDone):
                progress.unit_done(event)
                units.append({"seq": event.seq, "task": event.task_id, "method": event.method, "seed": event.seed,
                              "status": event.status, "run_id": event.run_id, "expression": event.expression,
                              "nmse_id": event.nmse, "seconds": event.seconds, "worker": event.worker,
                              "attempts": event.attempts, "error": event.error})
            elif isinstance(event, UnitRetried):
                progress.note(f"  retrying {event.task_id} (attempt {event.attempt + 1}): {event.reason}")
            elif isinstance(event, UnitDispatched):
                continue
            elif isinstance(event, SweepEnded):
                ended = event
    except PlanError as exc:
        raise UsageError(str(exc)) from None
    except StoreError as exc:
        _err(f"error: {exc}")
        return EXIT_FAILURE
    finally:
        signal.signal(signal.SIGINT, previous)
        progress.close()
        if backend is not None:
            backend.close(kill=context.force)
        store.close()
    assert ended is not None
    if args.json:
        _dump({**ended.to_json(), "db": str(store.path), "runs": units})
    else:
        counts = ", ".join(f"{n} {state}" for state, n in sorted(ended.counts.items()))
        print(f"sweep {ended.sweep_id}: {ended.status} in {ended.seconds:.0f} s ({counts})")
        if ended.message:
            print(f"  {ended.message}")
        print(f"  keplerlab report --sweep {ended.sweep_id}" + (f" --db {args.db}" if args.db else "")
              + "   tabulates it")
    if ended.status == "stopped":
        return 130
    lost = sum(ended.counts.get(k, 0) for k in ("lost", "interrupted", "pending"))
    return EXIT_OK if ended.status == "finished" and not lost else EXIT_FAILURE
