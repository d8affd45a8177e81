"""Metric curves along the stream (matplotlib is an optional extra: ``pip install 'omlc[plot]'``).

One panel per metric, one line per learner, x = rows seen. Values are drawn in
% (coverage in labels), as the command line's table prints them, and every
panel says so on its y axis. One legend serves every panel: it takes a grid
cell of its own when that completes the grid, else it sits under the panels,
so the figure has no empty cells.
"""
import math
import textwrap

_NOT_PERCENT = {"coverage"}
_LOWER_IS_BETTER_PREFIXES = ("hamming_loss", "ranking_loss", "one_error", "coverage", "cost_")


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("plotting needs matplotlib: pip install 'omlc[plot]'") from exc
    return plt


def grid_shape(n_panels):
    """``(rows, cols, legend_in_cell)`` for ``n_panels`` panels plus a legend:
    no empty cell when one exists, at most 5 columns and (if possible) 4 rows,
    wider before taller."""
    if n_panels <= 3:
        return 1, n_panels, False
    best = None
    for legend_cell in (True, False):
        cells = n_panels + legend_cell
        for cols in (5, 4, 3, 2):
            rows = math.ceil(cells / cols)
            empty = rows * cols - cells
            key = (rows > 4, empty, cols == 5, rows, not legend_cell)
            if best is None or key < best[0]:
                best = (key, (rows, cols, legend_cell))
    return best[1]


def axis_label(metric):
    unit = "labels" if metric in _NOT_PERCENT else "%"
    better = "lower" if metric.startswith(_LOWER_IS_BETTER_PREFIXES) else "higher"
    return f"{metric.replace('_', ' ')} ({unit}, {better} is better)"


def plot_curves(results, path, metrics=None, title=None):
    """Write the curves of ``results`` to ``path`` (format from the suffix).

    ``results``: :class:`omlc.evaluate.PrequentialResult` objects; each line is
    labelled with ``result.learner``. The curves are cumulative values over the
    rows seen so far (or windowed, if the evaluation asked for a window).
    Returns ``path``.
    """
    plt = _pyplot()
    if not results:
        raise ValueError("no results to plot")
    if metrics is None:
        metrics = [k for k in results[0].curve if k != "n_seen"]
    rows, cols, legend_cell = grid_shape(len(metrics))
    fig, axes = plt.subplots(rows, cols, figsize=(4.4 * cols, 3.2 * rows + 0.6), squeeze=False)
    cells = list(axes.flat)
    handles = None
    for ax, metric in zip(cells, metrics):
        scale = 1.0 if metric in _NOT_PERCENT else 100.0
        for res in results:
            (line,) = ax.plot(res.curve["n_seen"], scale * res.curve[metric], label=res.learner,
                              linewidth=1.6)
        ax.set_title(metric.replace("_", " "))
        ax.set_xlabel("rows seen")
        ax.set_ylabel(axis_label(metric), fontsize="small")
        ax.grid(alpha=0.3)
        handles = ax.get_legend_handles_labels()
    for ax in cells[len(metrics):]:
        ax.axis("off")
    if legend_cell:
        cells[len(metrics)].legend(*handles, loc="center", title="learner", frameon=False)
    if title:
        # About 10 characters per inch of figure at the default font size.
        fig.suptitle("\n".join(textwrap.wrap(title, width=int(fig.get_figwidth() * 10))))
    fig.tight_layout()
    if not legend_cell:
        # Room under the x labels for the legend (about one inch).
        fig.subplots_adjust(bottom=1.05 / fig.get_figheight())
        fig.legend(*handles, loc="lower center", ncol=min(len(results), 6), title="learner",
                   frameon=False)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
