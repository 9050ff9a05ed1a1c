"""Typed results and the math on them (histograms, windows, series)."""
