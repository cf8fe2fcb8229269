"""Runs Python programs as `python PROGRAM` would, each in its own process,
forked from this one after the imports every seed program begins with.

usage: python preloaded_run.py PARALLEL TIMEOUT OUTDIR PROGRAM...

A seed program (tests/seeds/) spends ~7 of its ~10 s importing torch,
torch.export (which loads dynamo) and coreai_torch; here they are imported
once and each child starts with them in sys.modules, where the program's
own imports find them, as a second import in one interpreter would. A child
is otherwise the program's own interpreter: the program runs as __main__
(runpy) from its directory, with sys.argv = [PROGRAM] and sys.path[0] its
directory; its stdout and stderr (file descriptors 1 and 2, so its
subprocesses' output too) go to OUTDIR/NAME.out and NAME.err; an uncaught
exception prints its traceback and exits 1, SystemExit as the interpreter
treats it, then the non-daemon threads are joined and the atexit handlers
run. OUTDIR/NAME.rc gets the exit status
(-N: killed by signal N; "timeout" after TIMEOUT seconds, the child killed).
PARALLEL children run at once. Exits 0 once every program has a status.
"""
import os
import signal
import sys
import time


def _child(program: str, outdir: str) -> None:
    import atexit
    import io
    import runpy
    import threading
    import traceback

    name = os.path.basename(program)
    for fd, suffix in ((1, ".out"), (2, ".err")):
        f = os.open(os.path.join(outdir, name + suffix), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(f, fd)
        os.close(f)
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=False)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), errors="backslashreplace", line_buffering=True)
    here = os.path.dirname(os.path.abspath(program))
    os.chdir(here)
    sys.argv = [program]
    sys.path[0] = here
    code = 0
    try:
        runpy.run_path(program, run_name="__main__")
    except SystemExit as e:
        if e.code is None:
            code = 0
        elif isinstance(e.code, int):
            code = e.code
        else:
            print(e.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        # what the interpreter's exit does before the atexit handlers: join
        # the non-daemon threads (and so run concurrent.futures' exit hook)
        shutdown = getattr(threading, "_shutdown", None)
        if shutdown is not None:
            shutdown()
        atexit._run_exitfuncs()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code & 0xFF)


def main(argv) -> int:
    if len(argv) < 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    parallel, timeout, outdir, programs = int(argv[0]), float(argv[1]), argv[2], argv[3:]
    import torch  # noqa: F401  (the preload)
    import torch.export._trace  # noqa: F401
    import coreai_torch  # noqa: F401

    pending, running = list(programs), {}
    while pending or running:
        while pending and len(running) < parallel:
            program = pending.pop(0)
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(program, outdir)
            running[pid] = (program, time.monotonic())
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            now = time.monotonic()
            for p, (program, start) in list(running.items()):
                if now - start > timeout:
                    os.kill(p, signal.SIGKILL)
                    os.waitpid(p, 0)
                    del running[p]
                    _status(outdir, program, "timeout")
            time.sleep(0.02)
            continue
        program, _ = running.pop(pid)
        _status(outdir, program, str(os.waitstatus_to_exitcode(status)))
    return 0


def _status(outdir: str, program: str, status: str) -> None:
    with open(os.path.join(outdir, os.path.basename(program) + ".rc"), "w") as f:
        f.write(status + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
