"""Peak RSS of a bench child process, measured so a parent's memory does not leak into it."""

from __future__ import annotations

import resource


def peak_rss_mb() -> float:
    """This process's own peak resident set, in MiB: VmHWM of its address space (Linux).

    Not `ru_maxrss`: Linux carries the high-water mark across fork+exec, so a child's
    ru_maxrss starts at its parent's RSS. The extract bench's parent holds the server's id
    set (~400 MB at 1M intents); the reconcile bench's parent generates the data (2.1 GB
    at 3M rows, reported as the engine's peak when the data was generated in the same run).
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
