# SPDX-License-Identifier: GPL-2.0-only
"""matplotlib for the plotting tools, with the Agg backend (no display needed).

The tools run with whatever python3 is first on PATH. That need not be the one Debian's
python3-matplotlib installed into (a pyenv or a venv often comes first), so when the running
python3 cannot import matplotlib the tool runs itself again, once, with $PVLOCK_PYTHON
(default /usr/bin/python3, Debian's). When that cannot either, it exits with a message that
says what to install, never with a traceback."""
import os
import sys

FALLBACK = os.environ.get("PVLOCK_PYTHON") or "/usr/bin/python3"
# Set in the environment of the second attempt, so that it never tries a third time.
RETRIED = "PVLOCK_PLOT_RETRIED"


def pyplot(tool):
    try:
        import matplotlib
    except ImportError:
        tried = [sys.executable]
        if not os.environ.get(RETRIED) and os.access(FALLBACK, os.X_OK) and \
                os.path.realpath(FALLBACK) != os.path.realpath(sys.executable):
            os.environ[RETRIED] = sys.executable
            os.execv(FALLBACK, [FALLBACK] + sys.argv)
        if os.environ.get(RETRIED) and os.environ[RETRIED] != sys.executable:
            tried.insert(0, os.environ[RETRIED])
        sys.exit(f"{tool}: needs matplotlib, which {' and '.join(tried)} cannot import "
                 f"(Debian: apt install python3-matplotlib; or set PVLOCK_PYTHON to a python3 "
                 f"that has it)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt
