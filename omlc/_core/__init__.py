"""Compiled kernels (Cython). Nothing here imports omlc's Python layer."""
