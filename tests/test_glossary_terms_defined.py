"""Define before use: every term of the GPU's execution model, and every other term issue 37 adds
(FP8 scaling, the Tensor Core roofline, the Hopper ladder, the trees of all-reduce, the costs of
pipeline and data parallelism), is in the glossary and is defined in a lesson before any lesson,
exercise or feedback text uses it, in the lesson the glossary names.

The course is read in order 00..16, and for each number: the lesson's cells, then the exercise
notebook's cells, then the texts of that lesson's questions in the bank (prompts, feedback of the
known wrong answers, hints, explanations), its hint ladders, and the messages of the lab feedback
modules whose first lab is in that lesson. A markdown cell is read as written; a code cell as a
student sees it: its string literals (what it prints) and its comments. A term is *defined* where
a lesson's markdown first writes it in bold (``**warps**``, ``**streaming multiprocessors
(SMs)**``); it is *used* wherever its pattern first matches, in any case. Both are placed by
(position in that order, offset in the text), so a definition and a use in the same cell are
ordered too.
"""
import ast
import io
import json
import re
import tokenize
from pathlib import Path

import pytest

from gemmlab import glossary
from gemmlab.grading.bank import get_question, lesson_questions
from gemmlab.grading.hint_ladders import LADDERS

ROOT = Path(__file__).resolve().parent.parent

# glossary entry: (pattern of a use, pattern of the words a definition sets in bold). Patterns
# match in any case; an acronym that is also a word ("ZeRO", "zero") keeps its case with (?-i:...).
TERMS = {
    "streaming multiprocessor (SM)": (r"(?-i:\bSMs?\b)|streaming multiprocessor",
                                      r"streaming multiprocessors?( \(SMs?\))?|SMs?"),
    "lane": (r"\blanes?\b", r"lanes?"),
    "warp": (r"\bwarps?\b", r"warps?"),
    "warp scheduler": (r"\bwarp schedulers?\b", r"warp schedulers?"),
    "latency hiding": (r"latency hiding|\bhid(e|es|ing|den)\b (the |its |their |a |that )?"
                       r"(\w+ )?latenc", r"latency hiding"),
    "coalescing": (r"\bcoalesc", r"coalesc\w*"),
    "shared-memory bank": (r"\bbanks?\b(?! conflict)", r"banks?"),
    "bank conflict": (r"\bbank conflicts?\b", r"bank conflicts?"),
    "occupancy": (r"\boccupancy\b", r"occupancy"),
    # lesson 01: FP8 conversion and scaling ("saturated" elsewhere means a busy unit, not this)
    "saturating conversion": (r"(?<!non-)\b[Ss]aturat(e|es|ing)\b|__NV_SATFINITE",
                              r"saturating( conversions?)?"),
    "non-saturating conversion": (r"\b[Nn]on-saturating\b", r"non-saturating( conversions?| casts?)?"),
    "amax": (r"\bamax\b", r"amax"),
    "per-tensor scale": (r"\b[Pp]er-tensor scal|\bscales? per tensor", r"per-tensor scales?"),
    # lesson 04: the roofline's ridge and decode (`decode` in backticks is lesson 01's function)
    "ridge point": (r"\bridge\b", r"ridge points?"),
    "decode": (r"(?<!`)\b[Dd]ecod(e|es|ing)\b(?!`)", r"decode|decoding"),
    # lessons 08, 12 and 12b: Hopper's copy engine, warpgroup MMAs and their synchronisation
    "Tensor Memory Accelerator (TMA)": (r"(?-i:\bTMA\b)|Tensor Memory Accelerator",
                                        r"TMA|Tensor Memory Accelerator( \(TMA\))?"),
    "warpgroup": (r"\b[Ww]arp[- ]?groups?\b", r"warp[- ]?groups?"),
    "wgmma (warpgroup MMA)": (r"\bwgmmas?\b", r"`?wgmma(\.mma_async)?`?s?"),
    "Tensor Memory (TMEM)": (r"\bTMEM\b|\bTensor Memory\b(?! Accelerator)",
                             r"Tensor Memory( \(TMEM\))?|TMEM"),
    "mbarrier": (r"\bmbarriers?\b", r"mbarriers?"),
    "warp specialisation": (r"\b[Ww]arp speciali[sz]", r"warp speciali[sz]ation"),
    "swizzle": (r"\b[Ss]wizzl", r"swizzl\w*"),
    "setmaxnreg": (r"setmaxnreg", r"`?setmaxnreg`?"),
    "Tensor Core": (r"\btensor cores?\b", r"tensor cores?"),
    "stall reason": (r"\b[Ss]tall reasons?\b", r"stall reasons?"),
    # lesson 07: the trees of all-reduce
    "binomial tree": (r"\b[Bb]inomial\b", r"binomial trees?"),
    "double binary tree": (r"\b[Dd]ouble[- ]binary trees?\b", r"double[- ]binary trees?"),
    # lesson 13: what pipeline and data parallelism cost
    "pipeline bubble": (r"\b[Bb]ubbles?\b", r"(pipeline )?bubbles?"),
    "1F1B (one forward, one backward)": (r"\b1F1B\b", r"1F1B"),
    "GPipe": (r"\bGPipe\b", r"GPipe"),
    "ring attention": (r"\b[Rr]ing attention\b", r"ring attention"),
    "ZeRO (Zero Redundancy Optimizer)": (r"(?-i:\bZeRO\b)", r"ZeRO"),
    # lesson 16: fused attention
    "fused attention": (r"\b[Ff]used attention\b", r"fused attention"),
    "online softmax": (r"\b[Oo]nline softmax\b", r"online softmax"),
    "log-sum-exp": (r"\b[Ll]og-sum-exp\b", r"log-sum-exp"),
}


def shown_by_code(source):
    """What a student sees of a code cell or module: its string literals (what it prints, the
    literal parts of f-strings) and its comments; docstrings too, unless ``docstrings=False``."""
    lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
    source = "\n".join(lines)
    texts = [node.value for node in ast.walk(ast.parse(source))
             if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    comments = [tok.string for tok in tokenize.generate_tokens(io.StringIO(source).readline)
                if tok.type == tokenize.COMMENT]
    return "\n".join(texts + comments)


def _cells(path):
    """Each cell as a student reads it: markdown as written, code as :func:`shown_by_code`."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [(c["cell_type"], "".join(c["source"]) if c["cell_type"] == "markdown"
             else shown_by_code("".join(c["source"])))
            for c in cells if c["cell_type"] in ("markdown", "code")]


# the lab feedback modules, each read where its first lab is: what a failed check can tell
FEEDBACK_MODULES = {
    "03": ("simulator", "warps", "views", "observations", "puzzle_feedback", "limits"),
    "05": ("feedback", "output_hints", "kernel_lab", "compile"),
    "06": ("ranks", "deadlock", "tensor"),
    "07": ("ring",),
    "08": ("overlap",),
    "11": ("registers",),
    "12": ("wmma",),
    "13": ("groups",),
    "15": ("budget",),
    "16": ("attention_feedback", "attention_lab"),
}


def _messages(module):
    """The string literals of a labs module that are not docstrings: its messages."""
    tree = ast.parse((ROOT / "gemmlab" / "labs" / f"{module}.py").read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
                  and node.body and isinstance(node.body[0], ast.Expr)}
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and isinstance(node.value, str) and id(node) not in docstrings]


def _feedback(lesson):
    texts = []
    for qid in lesson_questions(lesson):
        q = get_question(qid)
        texts += [str(q.prompt)] + [str(w.feedback) for w in q.wrong]
        texts += [str(t) for t in (getattr(q, "hint", ""), getattr(q, "explain", "")) if t]
    texts += [step for qid, ladder in LADDERS.items() if qid.split(".")[0] == f"{lesson:02d}"
              for step in ladder.steps]
    return texts


def course_texts():
    """[(where, text, is_lesson)] in course order."""
    texts = []
    for n in range(17):
        for folder in ("notebooks", "exercises"):
            for path in sorted((ROOT / folder).glob(f"{n:02d}*_*.ipynb")):   # 12, then 12b
                texts += [(f"{folder}/{path.name} {kind} cell {i}", text,
                           folder == "notebooks" and kind == "markdown")
                          for i, (kind, text) in enumerate(_cells(path))]
        texts += [(f"bank lesson {n:02d}", text, False) for text in _feedback(n)]
        texts += [(f"gemmlab/labs/{module}.py", text, False)
                  for module in FEEDBACK_MODULES.get(f"{n:02d}", ()) for text in _messages(module)]
    return texts


def first_use_and_definition(term, texts):
    """((position, offset, where) of the first use, same of the first definition), None if none."""
    use_pattern, defined_pattern = (re.compile(p, re.IGNORECASE) for p in TERMS[term])
    bold = re.compile(r"\*\*(" + TERMS[term][1] + r")\.?\*\*", re.IGNORECASE)   # "**Occupancy.**"
    use = definition = None
    for position, (where, text, is_lesson) in enumerate(texts):
        found = use_pattern.search(text)
        if use is None and found:
            use = (position, found.start(), where)
        marked = bold.search(text) if is_lesson else None
        if definition is None and marked:
            definition = (position, marked.start(), where)
        if use and definition:
            break
    assert defined_pattern.pattern
    return use, definition


@pytest.fixture(scope="module")
def texts():
    return course_texts()


@pytest.mark.parametrize("term", sorted(TERMS))
def test_term_is_in_the_glossary(term):
    assert glossary.lookup(term).english == term


@pytest.mark.parametrize("term", sorted(TERMS))
def test_term_is_defined_in_a_lesson_before_its_first_use(term, texts):
    use, definition = first_use_and_definition(term, texts)
    assert definition is not None, f"{term!r} is never defined (in bold) in a lesson"
    if use is not None:
        assert definition[:2] <= use[:2], (
            f"{term!r} is used in {use[2]} before it is defined in {definition[2]}")


@pytest.mark.parametrize("term", sorted(TERMS))
def test_the_glossary_names_the_lesson_that_defines_the_term(term, texts):
    lesson = glossary.lookup(term).lesson
    definition = first_use_and_definition(term, texts)[1]
    assert lesson and definition is not None
    assert definition[2].startswith(f"notebooks/{lesson}_"), (
        f"the glossary says lesson {lesson} defines {term!r}; the first definition is in "
        f"{definition[2]}")


def test_the_scan_sees_a_use_before_a_definition():
    # the attack: a term used in an exercise before any lesson defines it is caught
    texts = [("exercises/04 cell 1", "a block runs on one SM", False),
             ("notebooks/05 cell 1", "a **streaming multiprocessor (SM)** ...", True)]
    use, definition = first_use_and_definition("streaming multiprocessor (SM)", texts)
    assert use[0] == 0 and definition[0] == 1 and definition[:2] > use[:2]
    # bold in an exercise or in feedback is not a definition
    texts = [("exercises/03 cell 1", "**warps** of 32", False)]
    assert first_use_and_definition("warp", texts)[1] is None


def test_patterns_tell_a_term_from_its_neighbours():
    def uses(term, text):
        return bool(re.search(TERMS[term][0], text))
    assert uses("saturating conversion", "CUDA's saturating conversion")
    assert not uses("saturating conversion", "a non-saturating cast")
    assert not uses("saturating conversion", "DRAM bandwidth saturated")
    assert not uses("decode", "`decode` splits a float into its fields") and uses("decode", "Decode is")
    assert uses("warpgroup", "a warp group of 4 warps") and uses("warpgroup", "warp-group MMAs")
    assert not uses("ZeRO (Zero Redundancy Optimizer)", "rounds to zero") and not uses("ridge point", "a bridge")


def test_the_scan_reads_code_as_a_student_sees_it():
    # what a cell prints and what its comments say are uses; its names are not
    shown = shown_by_code('from x import warps as wm\nprint(f"{n // 32} Warps")\n'
                          '%matplotlib inline\ny = 1  # peak Tensor Core FLOP/s\n')
    assert "Warps" in shown and "Tensor Core" in shown and "wm" not in shown
    texts = [("notebooks/00 code cell 1", shown, False),
             ("notebooks/03 markdown cell 2", "threads run in **warps** of 32", True)]
    for term in ("warp", "Tensor Core"):
        use, definition = first_use_and_definition(term, texts)
        assert use[0] == 0 and (definition is None or definition[0] == 1)
    # a lab's messages are read, its docstrings are not
    messages = _messages("puzzle_feedback")
    assert messages and not any(text.startswith("What a warm-up puzzle says") for text in messages)


@pytest.mark.parametrize("lesson", ["05", "08", "10", "11"])
def test_a_kernel_labs_worked_kernel_comes_before_the_pointer_to_the_lab(lesson):
    # "every kernel lab follows a worked kernel of the same pattern on another problem"
    path = next((ROOT / "notebooks").glob(f"{lesson}_*.ipynb"))
    markdown = [text for kind, text in _cells(path) if kind == "markdown"]
    worked = [i for i, text in enumerate(markdown) if text.startswith("**A worked")]
    lab = [i for i, text in enumerate(markdown) if text.startswith("**Lab")]
    assert worked and lab and worked[0] < lab[0], (path.name, worked, lab)


def test_every_feedback_module_of_the_labs_is_read():
    # a new module of lab messages is placed at its first lab, or the scan would miss its words
    read = {module for modules in FEEDBACK_MODULES.values() for module in modules}
    found = {p.stem for p in (ROOT / "gemmlab" / "labs").glob("*feedback*.py")}
    found |= {p.stem for p in (ROOT / "gemmlab" / "labs").glob("*hints*.py")}
    assert found and found <= read, found - read
    assert all((ROOT / "gemmlab" / "labs" / f"{module}.py").is_file() for module in read)
