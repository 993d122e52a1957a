"""The ``keplerlab`` command line: the same engine as the window, with no Qt imported.

JSON goes to stdout only; messages and progress go to stderr. Exit codes: 0 success,
1 failure (the run failed or could not be stored), 2 bad usage (unknown task or method,
malformed option).
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
import time
from typing import Any, Sequence

from . import __version__
from . import methods as m
from .store import RunStore, StoreError
from .tasks import registry

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    pass


def _err(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _dump(obj: Any) -> None:
    print(json.dumps(_json_safe(obj), indent=2))


def _json_safe(value: Any) -> Any:
    """inf / nan are not JSON; print them as null so every consumer can parse the output."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


# ---------------------------------------------------------------------------- tasks


def cmd_tasks_list(args: argparse.Namespace) -> int:
    tasks = registry.all_tasks(args.suite)
    if args.suite and not tasks:
        raise UsageError(f"no tasks under '{args.suite}'; suites: {', '.join(registry.SUITE_MODULES)}")
    if args.json:
        _dump([t.summary() for t in tasks])
        return EXIT_OK
    width = max((len(t.id) for t in tasks), default=10)
    for t in tasks:
        print(f"{t.id:<{width}}  {t.title}")
    _err(f"{len(tasks)} tasks")
    return EXIT_OK


def cmd_tasks_show(args: argparse.Namespace) -> int:
    task = _task(args.id)
    info = task.summary()
    if args.json:
        _dump(info)
        return EXIT_OK
    print(f"{task.id}\n{task.title}\n")
    print(task.context + "\n")
    print("Variables:")
    for v in task.variables:
        unit = f" [{v.unit}]" if v.unit else ""
        print(f"  {v.name:<8} {v.role:<7} {v.description}{unit}")
    print(f"\nGround truth: {task.ground_truth.expression}")
    if task.ground_truth.template:
        print(f"Form:         {task.ground_truth.template}")
        consts = ", ".join(f"{k} = {v:g}" for k, v in task.ground_truth.constants.items())
        print(f"Constants:    {consts}")
    if task.ground_truth.repair:
        print(f"Repair:       {task.ground_truth.repair}")
    if task.split_note:
        print(f"\nSplits: {task.split_note}")
    return EXIT_OK


def _task(task_id: str):
    try:
        return registry.get_task(task_id)
    except registry.UnknownTaskError as exc:
        raise UsageError(str(exc)) from None


# ---------------------------------------------------------------------------- run


def _parse_set(items: Sequence[str], method: m.Method) -> dict[str, Any]:
    """``--set name=value`` pairs, converted by the parameter's declared type."""
    params = {p.name: p for p in method.parameters()}
    config: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise UsageError(f"--set expects name=value, got '{item}'")
        name, raw = item.split("=", 1)
        name = name.strip()
        if name not in params:
            raise UsageError(f"method '{method.name}' has no parameter '{name}' (parameters: {', '.join(params)})")
        p = params[name]
        try:
            if p.type == "int":
                value: Any = int(raw)
            elif p.type == "float":
                value = float(raw)
            elif p.type == "bool":
                value = raw.strip().lower() in ("1", "true", "yes", "on")
            elif p.type == "multichoice":
                value = [v.strip() for v in raw.split(",") if v.strip()]
                bad = [v for v in value if p.choices and v not in p.choices]
                if bad:
                    raise UsageError(f"{name}: unknown choice(s) {', '.join(bad)}; valid: {', '.join(p.choices)}")
            else:
                value = raw
        except ValueError:
            raise UsageError(f"{name}: '{raw}' is not a valid {p.type}") from None
        if p.type in ("int", "float"):
            _check_range(p, value)
        config[name] = value
    return config


def _check_range(p: m.Param, value: float) -> None:
    """A numeric parameter must be finite and inside the bounds the method declares."""
    if not math.isfinite(value):
        raise UsageError(f"{p.name} must be a finite number, got {value}")
    if p.minimum is not None and value < p.minimum:
        raise UsageError(f"{p.name} must be at least {p.minimum:g}, got {value:g}")
    if p.maximum is not None and value > p.maximum:
        raise UsageError(f"{p.name} must be at most {p.maximum:g}, got {value:g}")


def cmd_run(args: argparse.Namespace) -> int:
    from .runner import RunFinished, execute

    task = _task(args.task)
    try:
        method = m.get_method(args.method)
    except m.UnknownMethodError as exc:
        raise UsageError(str(exc)) from None
    config = _parse_set(args.set or [], method)
    if args.seed is not None:
        config["seed"] = args.seed
    if args.seconds is not None:
        if not math.isfinite(args.seconds) or args.seconds <= 0:
            raise UsageError("--seconds must be a positive, finite number of seconds")
        config["seconds"] = args.seconds
    params = {p.name: p for p in method.parameters()}
    for name in ("seed", "seconds"):
        if name in config and name in params:
            _check_range(params[name], config[name])
    context = m.RunContext()

    def on_interrupt(signum, frame):
        _err("stopping… (the best model so far will be scored and stored)")
        context.cancel()

    previous = signal.signal(signal.SIGINT, on_interrupt)
    result: RunFinished | None = None
    try:
        store = RunStore(args.db)
    except StoreError as exc:
        _err(f"error: {exc}")
        return EXIT_FAILURE
    try:
        _err(f"{method.label} on {task.id}")
        last_report = 0.0
        for event in execute(task, method.name, config, context, store):
            if isinstance(event, m.Progress):
                now = time.monotonic()
                if now - last_report >= 1.0 and not args.quiet:
                    last_report = now
                    _err(
                        f"  iteration {event.iteration:>5}  best train NMSE {event.best_loss:.4g}  "
                        f"evaluations {event.evaluations:,}  {event.elapsed:5.1f} s"
                    )
            elif isinstance(event, m.Log) and event.level != "info":
                _err(f"  {event.level}: {event.message}")
            elif isinstance(event, RunFinished):
                result = event
    except (ValueError, StoreError) as exc:
        _err(f"error: {exc}")
        return EXIT_FAILURE
    finally:
        signal.signal(signal.SIGINT, previous)
        store.close()

    assert result is not None
    if args.json:
        _dump(result.to_json())
    else:
        print(f"run {result.run_id}: {result.status}" + (f" ({result.stop_reason})" if result.stop_reason else ""))
        if result.expression:
            print(f"  model       {result.task_id.rsplit('/', 1)[-1]}: {task.target.name} = {result.expression}")
            print(f"  complexity  {result.complexity}")
        for key, label in (("id", "test ID "), ("ood", "test OOD")):
            mt = result.metrics.get(key)
            if mt:
                print(f"  {label}    NMSE {_fmt(mt['nmse'])}  Acc0.1 {_fmt(mt['acc_0.1'])}  R2 {_fmt(mt['r2'])}")
        symbolic = result.metrics.get("symbolic")
        if symbolic:
            print(f"  SA          {_verdict(symbolic.get('equivalent'))} ({symbolic.get('reason', '')})")
        print(f"  seconds     {result.seconds:.1f}")
    if result.error:
        _err(f"error: {result.error}")
    return EXIT_OK if result.status in ("finished", "cancelled") else EXIT_FAILURE


# ---------------------------------------------------------------------------- runs


def cmd_runs_list(args: argparse.Namespace) -> int:
    try:
        with RunStore(args.db) as store:
            runs = store.list_runs(task_id=args.task, limit=args.limit)
    except StoreError as exc:
        _err(f"error: {exc}")
        return EXIT_FAILURE
    if args.json:
        _dump([r.to_dict() for r in runs])
        return EXIT_OK
    for r in runs:
        nmse = (r.metrics.get("id") or {}).get("nmse")
        sa = _sa_mark(r.metrics.get("symbolic"))
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.started_at))
        print(f"{r.id}  {started}  {r.status:<11} {r.method:<4} {r.task_id}  NMSE(ID) {_fmt(nmse)}  SA {sa}")
    _err(f"{len(runs)} runs")
    return EXIT_OK


def cmd_methods_list(args: argparse.Namespace) -> int:
    rows = []
    for name in m.method_names():
        method = m.get_method(name)
        rows.append(
            {
                "name": method.name,
                "label": method.label,
                "description": method.description,
                "kinds": list(method.kinds),
                "parameters": [
                    {"name": p.name, "type": p.type, "default": p.default, "help": p.help} for p in method.parameters()
                ],
            }
        )
    if args.json:
        _dump(rows)
    else:
        for row in rows:
            print(f"{row['name']:<6} {row['label']}")
            for p in row["parameters"]:
                print(f"         --set {p['name']}=… (default {p['default']}) {p['help']}")
    return EXIT_OK


# ---------------------------------------------------------------------------- equiv


def _infer_variables(truth: str) -> list[str]:
    """Every name the truth uses (so the truth's constants are its numbers only)."""
    from .expr import ExpressionError, parse

    try:
        expr = parse(truth, [], allow_free_symbols=True)
    except ExpressionError:
        return []  # the check itself reports the parse error
    return sorted(s.name for s in expr.free_symbols)


def _variables_arg(value: Any, truth: Any) -> list[str]:
    if value is None:
        return _infer_variables(truth) if isinstance(truth, str) else []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    raise ValueError("'variables' must be a list of names or a comma-separated string")


def _equiv_line(number: int, line: str, seconds: float) -> dict[str, Any]:
    from .expr import check_equivalence

    try:
        item = json.loads(line)
        if not isinstance(item, dict):
            raise ValueError("expected a JSON object")
        missing = [k for k in ("truth", "candidate") if k not in item]
        if missing:
            raise ValueError(f"missing {', '.join(missing)}")
        variables = _variables_arg(item.get("variables"), item["truth"])
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        return {"line": number, "equivalent": None, "reason": f"line {number}: malformed input ({exc})", "method": "parse"}
    result = check_equivalence(item["truth"], item["candidate"], variables, seconds=seconds).to_json()
    return {"line": number, **result}


def cmd_equiv(args: argparse.Namespace) -> int:
    from .expr import check_equivalence

    if not math.isfinite(args.seconds) or args.seconds <= 0:
        raise UsageError("--seconds must be a positive, finite number of seconds")
    if args.pairs:
        if args.truth is not None or args.candidate is not None or args.variables is not None:
            raise UsageError("--pairs reads truth, candidate and variables from the file; do not give them as options")
        try:
            handle = sys.stdin if args.pairs == "-" else open(args.pairs, encoding="utf-8")
        except OSError as exc:
            _err(f"error: cannot read {args.pairs}: {exc.strerror or exc}")
            return EXIT_FAILURE
        counts = {True: 0, False: 0, None: 0}
        with handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                result = _equiv_line(number, line, args.seconds)
                counts[result["equivalent"]] += 1
                if args.json:
                    print(json.dumps(_json_safe(result)), flush=True)
                else:
                    print(f"{number:>5}  {_verdict(result['equivalent']):<14}  {result['reason']}", flush=True)
        _err(f"{counts[True]} equivalent, {counts[False]} not equivalent, {counts[None]} undecided")
        return EXIT_OK
    if args.truth is None or args.candidate is None:
        raise UsageError("give --truth and --candidate, or --pairs FILE")
    variables = _variables_arg(args.variables, args.truth)
    result = check_equivalence(args.truth, args.candidate, variables, seconds=args.seconds)
    if args.json:
        _dump({"truth": args.truth, "candidate": args.candidate, "variables": variables, **result.to_json()})
    else:
        print(f"{_verdict(result.equivalent)}: {result.reason}")
    return EXIT_OK


def _sa_mark(symbolic: dict | None) -> str:
    """Symbolic accuracy in a table cell: yes / no / ? (undecided) / - (not checked)."""
    if not symbolic:
        return "-"
    return {True: "yes", False: "no"}.get(symbolic.get("equivalent"), "?")


def _verdict(value: bool | None) -> str:
    return {True: "equivalent", False: "not equivalent", None: "undecided"}[value]


# ---------------------------------------------------------------------------- parser


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # bad usage: one line on stderr, exit 2
        self.print_usage(sys.stderr)
        _err(f"{self.prog}: error: {message}")
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="keplerlab", description="Kepler Lab: scientific equation discovery.")
    parser.add_argument("--version", action="version", version=f"keplerlab {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    tasks = sub.add_parser("tasks", help="browse benchmark tasks")
    tsub = tasks.add_subparsers(dest="tasks_command", parser_class=_Parser)
    tl = tsub.add_parser("list", help="list tasks")
    tl.add_argument("--suite", help="id prefix(es), comma-separated, e.g. llmsrbench/lsr-synth")
    tl.add_argument("--json", action="store_true", help="print a JSON array")
    tl.set_defaults(func=cmd_tasks_list)
    ts = tsub.add_parser("show", help="show one task")
    ts.add_argument("id")
    ts.add_argument("--json", action="store_true")
    ts.set_defaults(func=cmd_tasks_show)

    run = sub.add_parser("run", help="run a discovery method on a task")
    run.add_argument("--task", required=True, help="task id, e.g. llmsrbench/lsr-synth/chemistry/CKR1")
    run.add_argument("--method", default="gp", help="method name (default: gp)")
    run.add_argument("--seconds", type=float, help="wall-clock budget in seconds")
    run.add_argument("--seed", type=int, help="random seed")
    run.add_argument("--set", action="append", metavar="NAME=VALUE", help="set a method parameter (repeatable)")
    run.add_argument("--db", help="run store path (default: the user data directory)")
    run.add_argument("--json", action="store_true", help="print the result as one JSON object")
    run.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    run.set_defaults(func=cmd_run)

    runs = sub.add_parser("runs", help="past runs in the store")
    rsub = runs.add_subparsers(dest="runs_command", parser_class=_Parser)
    rl = rsub.add_parser("list", help="list runs, newest first")
    rl.add_argument("--task", help="only runs of this task")
    rl.add_argument("--limit", type=int, default=50)
    rl.add_argument("--db")
    rl.add_argument("--json", action="store_true")
    rl.set_defaults(func=cmd_runs_list)

    eq = sub.add_parser(
        "equiv",
        help="is a candidate equation the ground truth up to constants?",
        description=(
            "Decide whether a candidate equals the ground truth up to the values of its constants "
            "(symbolic accuracy). Every number that is not an exponent and every name that is not a "
            "variable is a free constant; both expressions must describe the same family of "
            "functions, so a candidate with an extra term or an extra free constant is not "
            "equivalent. The answer is equivalent, not equivalent or undecided (null), with a reason. "
            "An unparsable expression is an answer (undecided), not an error: the exit code is 0."
        ),
    )
    eq.add_argument("--truth", help="ground-truth expression, e.g. 'G*m1*m2/r**2'")
    eq.add_argument("--candidate", help="candidate expression")
    eq.add_argument(
        "--variables",
        help=(
            "input variables, comma-separated (e.g. m1,m2,r); every other name is a constant. "
            "Default: every name the truth uses, so give it whenever the truth has named constants "
            "such as G"
        ),
    )
    eq.add_argument(
        "--pairs",
        metavar="FILE",
        help=(
            "batch mode: a JSON-lines file ('-' for stdin) of objects with truth, candidate and "
            "optional variables (list or 'x,y'; same default); one result per line, in order, and a "
            "malformed line gives a result with equivalent null naming the line"
        ),
    )
    eq.add_argument("--seconds", type=float, default=5.0, help="time budget per check (default 5)")
    eq.add_argument("--json", action="store_true", help="print JSON (one object; one per line with --pairs)")
    eq.set_defaults(func=cmd_equiv)

    methods = sub.add_parser("methods", help="discovery methods")
    msub = methods.add_subparsers(dest="methods_command", parser_class=_Parser)
    ml = msub.add_parser("list", help="list methods and their parameters")
    ml.add_argument("--json", action="store_true")
    ml.set_defaults(func=cmd_methods_list)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        # "keplerlab tasks" with no sub-command: show that group's help.
        parser.parse_args([*(argv or sys.argv[1:]), "--help"])
        return EXIT_USAGE
    try:
        return args.func(args)
    except UsageError as exc:
        _err(f"keplerlab: error: {exc}")
        return EXIT_USAGE
    except BrokenPipeError:  # e.g. `keplerlab tasks list | head`
        return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
