"""Shared by the framework workers: records what the rank's process sees and
prints results as `DISTENV-RESULT {json}` lines that conformance.py reads.

The workers only report what the frameworks derived; conformance.py judges the
values against the topology it computed itself."""
import json
import os
import socket
import sys

# Taken when this module is imported, before any framework has touched os.environ.
START_ENV = dict(os.environ)


def emit(what, **data):
    data["what"] = what
    sys.stdout.write("DISTENV-RESULT " + json.dumps(data, sort_keys=True) + "\n")
    sys.stdout.flush()


def emit_start():
    """Reports the process's environment names and its hostname (UTS namespace)."""
    emit("start", env=sorted(START_ENV), hostname=socket.gethostname(), pid=os.getpid())


def quiet_frameworks():
    """Keeps framework logs short. Set inside the program, after the environment
    the rank received was recorded."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
