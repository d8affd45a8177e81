"""The reproductions not yet moved to :mod:`omlc.experiments` (csdpp, boosting).

Each module has ``run``, a report and ``main(argv)`` for ``omlc reproduce
<paper>``; the other papers are experiments (``omlc/experiments/``).
"""
