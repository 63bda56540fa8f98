# These notebooks attack whoever runs them: pytest must never execute them (nbval collects every
# .ipynb under tests/). tests/test_grade_hostile.py grades copies of them with `gemmlab grade`.
collect_ignore_glob = ["*"]
