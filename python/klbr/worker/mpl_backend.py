"""The matplotlib backend of a ``--display`` workbench (C20), imported by matplotlib itself.

Agg for drawing (no GUI); ``plt.show()`` shows every open figure as ``image/png`` through the
running cell's displays (``display.py``) and closes it, as IPython's inline backend does at the
end of a cell (``matplotlib_inline.backend_inline.show``), here as each ``show()`` happens.
The worker never imports this module (nor matplotlib): the hook in ``display.py`` names it as
matplotlib's backend when the cell imports matplotlib.
"""

from __future__ import annotations

from matplotlib._pylab_helpers import Gcf
from matplotlib.backends.backend_agg import FigureCanvasAgg

from . import display as _display

__all__ = ["FigureCanvas", "show"]

#: Figures draw with Agg.
FigureCanvas = FigureCanvasAgg


def show(close: bool | None = None, block: bool | None = None) -> None:
    """Show each open figure (``image/png``, at its own dpi) as a display of the running cell, and close it.

    ``close`` and ``block`` are accepted for matplotlib's ``show`` signature; shown figures are
    always closed (C20). Outside a running cell (a thread after its cell ended) figures are only closed.
    """
    managers = Gcf.get_all_fig_managers()
    try:
        displays = _display.current
        for manager in managers:
            if displays is not None:
                displays.show(manager.canvas.figure)
    finally:
        import matplotlib.pyplot as plt

        for manager in managers:
            plt.close(manager.canvas.figure)
