"""The process boundary for untrusted programs (architecture rule 5).

LLM-written Python (LLM-SR skeletons and the like) never runs in the application process. It
runs in worker processes started by :class:`SandboxPool`, each with CPU-time, memory, file-size
and process limits, a wall-clock timer in the parent, a scrubbed environment, a private
temporary directory, captured and capped output and, where the kernel allows, network, PID and
Landlock isolation. :meth:`SandboxPool.protections` says which of these are in force.
"""

from engine.sandbox.pool import EvalResult, SandboxLimits, SandboxPool, SandboxWorker, WorkerError

__all__ = ["EvalResult", "SandboxLimits", "SandboxPool", "SandboxWorker", "WorkerError"]
