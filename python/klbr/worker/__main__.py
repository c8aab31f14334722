"""``python -m klbr.worker``: see :mod:`klbr.worker.main`."""

import os
import sys

from .main import main

code = main()
for stream in (sys.__stdout__, sys.__stderr__):
    try:
        stream.flush()
    except (AttributeError, OSError, ValueError):
        pass
# os._exit: a thread a cell started must not keep a worker alive after its host let it go.
os._exit(code)
