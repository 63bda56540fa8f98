# These notebooks attack whoever runs them: pytest must never execute them (nbval collects every
# .ipynb under tests/). tests/test_gemmlab_grader_grade_hostile.py grades copies of them with the
# grader.
collect_ignore_glob = ["*"]
