"""Small statistics helpers: Wilson score intervals for proportions."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pandas as pd

__all__ = ["wilson_interval"]


def wilson_interval(
    successes: pd.Series | np.ndarray | int,
    trials: pd.Series | np.ndarray | int,
    confidence: float = 0.95,
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval (lower, upper) for `successes` out of `trials`.

    Chosen over the normal approximation because cohorts are small and rates near 0 or 1:
    Wilson never leaves [0, 1] and keeps its coverage there. Zero trials give (nan, nan).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    if np.any(k < 0) or np.any(k > n):
        raise ValueError("successes must be between 0 and trials")
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        denom = 1 + z**2 / n
        centre = (p + z**2 / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / denom
        low = np.where(n > 0, np.clip(centre - half, 0.0, 1.0), np.nan)
        high = np.where(n > 0, np.clip(centre + half, 0.0, 1.0), np.nan)
    return low, high
