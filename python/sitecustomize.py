"""Ringmaster's start-up hook for a script's ranks: their Python stacks on request, whatever they are stuck in.

The launcher puts this folder first on each rank's PYTHONPATH (for `import ringmaster`), so Python runs this file
at start-up. When the launcher also set RINGMASTER_STACKS_FILE and RINGMASTER_STACKS_SIGNAL, it registers
faulthandler on that signal: every thread's Python stack is appended to the file by a C signal handler, which
works while the interpreter is blocked inside C (a `dist.barrier()` that never returns, a lock, a read), where a
Python-level handler would never run. The launcher sends the signal when it declares the rank hung, before it
takes gdb's and py-spy's stacks (core/supervisor/stack_dumps.h), and only after /proc says the rank catches it.

Nothing else changes: the file is opened here (the handler cannot open it), and then the next `sitecustomize` on
sys.path (Debian's, a virtual environment's, the user's own) runs as it would have without this one. Standard
library only; any failure leaves the rank as it would have been without the hook.
"""

import os


def _register_stacks_on_signal():
    path = os.environ.get("RINGMASTER_STACKS_FILE")
    signal_number = os.environ.get("RINGMASTER_STACKS_SIGNAL")
    if not path or not signal_number:
        return
    try:
        import faulthandler

        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        # faulthandler keeps a reference to the file object: it stays open for the life of the process.
        faulthandler.register(int(signal_number), file=os.fdopen(descriptor, "wb", buffering=0), all_threads=True)
    except (OSError, ValueError, RuntimeError):
        pass


def _run_the_next_sitecustomize():
    import importlib.util
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    entries = [os.path.abspath(entry or os.curdir) for entry in sys.path]
    if here not in entries:
        return
    for entry in entries[entries.index(here) + 1:]:
        candidate = os.path.join(entry, "sitecustomize.py")
        if entry == here or not os.path.isfile(candidate):
            continue
        spec = importlib.util.spec_from_file_location("sitecustomize", candidate)
        module = importlib.util.module_from_spec(spec)
        sys.modules["sitecustomize"] = module
        spec.loader.exec_module(module)  # as site.py would: its errors are reported by site.py, then start-up goes on
        return


_register_stacks_on_signal()
_run_the_next_sitecustomize()
