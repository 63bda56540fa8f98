"""Figures and widgets used by the notebooks, one module per topic (``gemmlab.viz.bits``, ...).

A package rather than one ``viz.py`` because every lesson adds its own figures; each topic module
imports matplotlib and ipywidgets only when it is used.
"""
