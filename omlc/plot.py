"""Metric curves along the stream (matplotlib is an optional extra: ``pip install omlc[plot]``)."""


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("plotting needs matplotlib: pip install 'omlc[plot]'") from exc
    return plt


def plot_curves(results, path, metrics=None, title=None):
    """One panel per metric, one line per learner; x = rows seen.

    ``results``: a list of :class:`omlc.evaluate.PrequentialResult`.
    Writes the figure to ``path`` (format from the suffix) and returns it.
    """
    plt = _pyplot()
    if not results:
        raise ValueError("no results to plot")
    if metrics is None:
        metrics = [k for k in results[0].curve if k != "n_seen"]
    cols = min(3, len(metrics))
    rows = -(-len(metrics) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.3 * rows), squeeze=False)
    for ax, metric in zip(axes.flat, metrics):
        for res in results:
            ax.plot(res.curve["n_seen"], res.curve[metric], label=res.learner, linewidth=1.6)
        ax.set_title(metric.replace("_", " "))
        ax.set_xlabel("rows seen")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(metrics):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize="small")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
