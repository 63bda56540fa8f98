"""Lettered options in a prompt: the one place that writes them, for every bank module."""


def options_text(options):
    """Lines "  a) ...", one per option of ``{letter: text}``, to end a prompt with."""
    return "\n".join(f"  {key}) {text}" for key, text in options.items())
