"""The bank's letter questions test knowledge, not test-taking: the right letter is spread over
a, b, c, and the right option is not given away by its length; every letter a text quotes names
the option it means; and the notebooks list the options the bank judges.

Why these bounds. A student who knows nothing is right 1 time in 3 on a three-option question.
If one letter were right in more than 35% of the questions, "always answer that letter" would beat
that by more than a couple of questions in 40, so no letter may be. If the right option were the
longest in more than 40% of the questions, "pick the longest" would beat blind guessing by more
than 3 questions in 40 (16 against 13.3); the same holds for "pick the shortest" and for picking
by tone (the most hedged option, the one without "always" or "never"). Ties count against the
bank: a right option as long as the longest distractor counts as the longest.
"""
import re
from collections import Counter
from pathlib import Path

import nbformat
import pytest

from gemmlab import notebook_run
from gemmlab.grading.bank import questions
from gemmlab.judging import Choice

ROOT = Path(__file__).resolve().parent.parent
MAX_LETTER_SHARE = 0.35
MAX_LENGTH_TELL = 0.40


def _options(q):
    """{letter: text} as the prompt shows them (the lines "  a) ..." that options_text writes)."""
    found = re.findall(r"^  ([a-z])\) (.*(?:\n(?!  [a-z]\) ).*)*)", q.prompt, re.M)
    return {key: " ".join(text.split()) for key, text in found}


def _letter_questions(bank):
    return {qid: q for qid, q in bank.items() if isinstance(q.kind, Choice)
            and all(len(o) == 1 and o.isalpha() for o in q.kind.options)}


LETTERS = _letter_questions(questions())


def test_the_bank_has_letter_questions_and_each_prompt_shows_every_option():
    assert len(LETTERS) >= 30
    for qid, q in LETTERS.items():
        assert list(_options(q)) == [o.lower() for o in q.kind.options], qid


def test_no_letter_is_right_in_more_than_35_percent_of_the_letter_questions():
    counts = Counter(q.answer for q in LETTERS.values())
    worst, n = counts.most_common(1)[0]
    assert n / len(LETTERS) <= MAX_LETTER_SHARE, (
        f"{worst!r} is right in {n} of {len(LETTERS)} letter questions: {dict(counts)}")


def _length_rank_share(pick):
    """Share of the letter questions where the right option is the one ``pick`` (max or min)
    chooses by length, ties counting as chosen."""
    hits, shown = [], [(qid, _options(q), q.answer) for qid, q in LETTERS.items() if _options(q)]
    for qid, options, answer in shown:       # (a prompt without its options fails the first test)
        lengths = {k: len(text) for k, text in options.items()}
        if lengths[answer] == pick(lengths.values()):
            hits.append(qid)
    return len(hits) / len(shown), hits


@pytest.mark.parametrize("pick,word", [(max, "longest"), (min, "shortest")], ids=["longest", "shortest"])
def test_the_right_option_is_not_given_away_by_its_length(pick, word):
    share, hits = _length_rank_share(pick)
    assert share <= MAX_LENGTH_TELL, f"the right option is the {word} in {len(hits)}: {hits}"


HEDGES = re.compile(r"\b(can|may|might|depends?|not necessarily|only if|whichever|usually)\b", re.I)
ABSOLUTES = re.compile(r"\b(always|never|every|exactly|all|nothing|any)\b", re.I)


def _expected_score(cue):
    """Questions a student gets right, on average, who picks among the options with the highest
    ``cue`` at random."""
    total = 0.0
    for q in LETTERS.values():
        cues = {k: cue(text) for k, text in _options(q).items()}
        if cues:           # (a prompt without its options fails the first test)
            top = [k for k, value in cues.items() if value == max(cues.values())]
            total += (q.answer in top) / len(top)
    return total


@pytest.mark.parametrize("name,cue", [
    ("the most hedged option", lambda text: len(HEDGES.findall(text)) - len(ABSOLUTES.findall(text))),
    ("the option with the fewest absolutes", lambda text: -len(ABSOLUTES.findall(text))),
], ids=["most-hedged", "fewest-absolutes"])
def test_the_right_option_is_not_given_away_by_its_hedging(name, cue):
    """A test-taker's rule: the right answer hedges ("can", "may", "not necessarily") and the wrong
    ones overstate ("always", "never", "every"). Words are a proxy for tone, so the bound is on
    the average score of a student who follows the rule, ties broken at random."""
    score = _expected_score(cue)
    assert score / len(LETTERS) <= MAX_LENGTH_TELL, f"picking {name} scores {score:.1f} of {len(LETTERS)}"


# --- letters quoted in feedback, hints and explanations ---------------------------------------

QUOTE = re.compile(r"""\(([a-z])\)|\boptions? ([a-z])\b|\banswer ([a-z])\b|(?<!\w)["']([a-z])["'](?!\w)""")
WORDS_AFTER = re.compile(r"""[\s:,(]*["']([^"']+)""")


def stale_quotes(text, options):
    """What is wrong with each letter ``text`` quotes: a quote must name an option and be
    followed by that option's opening words in quotes, e.g. (b) "no: caches serve", so that a
    re-lettering that forgets the text is caught."""
    problems = []
    for m in QUOTE.finditer(text):
        letter = next(g for g in m.groups() if g)
        if letter not in options:
            problems.append(f"{m.group(0)} names no option (there are {', '.join(options)})")
            continue
        words = WORDS_AFTER.match(text, m.end())
        said = " ".join(words.group(1).split()) if words else ""
        if len(said.split()) < 3 or not options[letter].startswith(said.rstrip(". ")):
            problems.append(f"{m.group(0)} is not followed by the opening words of option "
                            f"{letter}: {options[letter][:40]!r}")
    return problems


def test_the_quote_check_catches_a_stale_or_bare_letter_and_accepts_a_right_one():
    options = {"a": "yes: every load is one access", "b": "no: caches serve many of them"}
    assert stale_quotes('unlike (b) "no: caches serve many", this ...', options) == []
    assert stale_quotes("option b says so", options)              # no words to check against
    assert stale_quotes('(a) "no: caches serve many"', options)     # the words are b's
    assert stale_quotes('(c) "no: caches serve many"', options)     # no option c


def _texts(q):
    yield "prompt", q.prompt.split("\n  a) ")[0]
    for name in ("hint", "explain"):
        if getattr(q, name, None):
            yield name, getattr(q, name)
    for w in q.wrong:
        yield f"Wrong({w.value!r})", w.feedback


@pytest.mark.parametrize("qid", sorted(LETTERS))
def test_every_letter_a_text_of_the_question_quotes_names_the_option_it_means(qid):
    q = LETTERS[qid]
    options = _options(q)
    for where, text in _texts(q):
        assert not stale_quotes(text, options), (where, stale_quotes(text, options))
    for w in q.wrong:
        assert w.value in options and w.value != q.answer, f"Wrong({w.value!r})"


# --- the notebooks show the options the bank judges -------------------------------------------

LIST_ITEM = re.compile(r'^\* `"([a-z])"`: (.*(?:\n(?!\* ).*)*)', re.M)


def _notebook_lists(path):
    """[(question id, {letter: text} listed in the markdown cell before its check, whether the
    notebook prints the question's prompt instead)] for the letter questions of a notebook."""
    cells = nbformat.read(path, as_version=4).cells
    found = []
    for i, cell in enumerate(cells):
        for qid in re.findall(r'check\("(\d\d\.\w+)"', cell.source) if cell.cell_type == "code" else ():
            if qid not in LETTERS:
                continue
            md = next(cells[j] for j in range(i - 1, -1, -1) if cells[j].cell_type == "markdown")
            listed = {k: " ".join(text.split()).rstrip(";.") for k, text in LIST_ITEM.findall(md.source)}
            printed = any(f'get_question("{qid}").prompt' in c.source for c in cells[:i])
            found.append((qid, listed, printed))
    return found


NOTEBOOKS = sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb")) + sorted(
    (ROOT / "exercises").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_notebook_lists_each_letter_question_s_options_as_the_bank_has_them(path):
    for qid, listed, printed in _notebook_lists(path):
        if printed and not listed:
            continue
        bank = {k: text.rstrip(";.") for k, text in _options(LETTERS[qid]).items()}
        assert listed == bank, f"{qid}: the notebook's options differ from the bank's"


def test_every_letter_question_is_shown_in_its_notebook():
    shown = {qid for path in NOTEBOOKS for qid, listed, printed in _notebook_lists(path)
             if listed or printed}
    assert shown == set(LETTERS)


# --- from the student's chair: guessing in a notebook -----------------------------------------

def _guesses():
    """{strategy: {question id: letter}}: always one letter, or the longest or shortest option."""
    shown = {qid: _options(q) or dict.fromkeys(q.kind.options, "") for qid, q in LETTERS.items()}
    by_length = {word: {qid: pick(options, key=lambda k, o=options: len(o[k]))
                        for qid, options in shown.items()}
                 for word, pick in (("longest", max), ("shortest", min))}
    return {**{f"always {letter}": dict.fromkeys(shown, letter) for letter in "abc"}, **by_length}


def test_a_student_guessing_by_letter_or_by_length_in_a_notebook_stays_near_chance(tmp_path):
    """The checks a guessing student runs in a kernel, and the verdicts shown: no strategy that
    needs no knowledge passes more than its bound."""
    cells = [nbformat.v4.new_code_cell("from gemmlab.grading import check")]
    for strategy, guesses in _guesses().items():
        cells.append(nbformat.v4.new_code_cell(
            f"verdicts = [check(qid, letter).status for qid, letter in {guesses!r}.items()]\n"
            f"print('SCORE', {strategy!r}, verdicts.count('pass'), len(verdicts))"))
    path = tmp_path / "guessing.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    ran = notebook_run.execute(path)
    shown = "".join(o.get("text", "") for c in ran.cells for o in c.get("outputs", []))
    scores = {s: (int(p), int(n)) for s, p, n in re.findall(r"^SCORE (.+) (\d+) (\d+)$", shown, re.M)}
    assert set(scores) == set(_guesses()), shown[-2000:]
    for strategy, (passed, total) in scores.items():
        bound = MAX_LETTER_SHARE if strategy.startswith("always") else MAX_LENGTH_TELL
        assert total == len(LETTERS) and passed / total <= bound, (strategy, passed, total)
