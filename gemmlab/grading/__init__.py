"""Exercise checking (``check``), the question bank, and the instructor's tools (``assign``,
``grade``)."""
from .checker import FAIL, NOT_ATTEMPTED, PASS, Result, check, judge

__all__ = ["check", "judge", "Result", "PASS", "FAIL", "NOT_ATTEMPTED"]
