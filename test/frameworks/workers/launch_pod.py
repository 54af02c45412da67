"""A pod's command for the launcher runs: reports the pod's environment names and
hostname as every worker does, then runs the pod's command line with /bin/sh, as
a container's `command: [sh, -c, ...]` would (so `$NODE_RANK` on it is expanded
from the injected environment, nowhere else)."""
import os
import sys

import report

report.emit_start()
os.execv("/bin/sh", ["/bin/sh", "-c", sys.argv[1]])
