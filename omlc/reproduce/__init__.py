"""Re-runs of the papers' experiments, printed beside the published numbers.

One module per paper (``omlc.reproduce.alt``, ...), each with ``run``,
``format_side_by_side`` and ``main(argv)`` for ``omlc reproduce <paper>``.
"""
