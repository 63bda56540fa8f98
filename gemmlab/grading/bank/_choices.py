"""Lettered options in a prompt: the one place that writes them, for every bank module.

A letter question's options are written in the order the student sees them, the right one at the
letter its question names: letters are placed by hand, question by question, so that the right
one is spread over a, b, c and no longer or more hedged than the others (the notebooks list the
same options, and a feedback that quotes a letter quotes that option's opening words too);
tests/test_grading_bank__choices.py keeps all of it."""


def options_text(options):
    """Lines "  a) ...", one per option of ``{letter: text}``, to end a prompt with."""
    return "\n".join(f"  {key}) {text}" for key, text in options.items())
