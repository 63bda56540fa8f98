"""Lesson 12's questions: every reference passes, every known wrong answer fails with its own
feedback, unanswered questions say "not attempted", and the seed's figures come out."""
import json
import pathlib
import re

import numpy as np
import pytest

from gemmlab.grading import FAIL, NOT_ATTEMPTED, PASS, judge
from gemmlab.grading.bank import get_question, l12, lesson_questions
from gemmlab.judging import Function, evaluate
from gemmlab.measure import recorded

ROOT = pathlib.Path(__file__).resolve().parents[1]
IDS = lesson_questions(12)
# The seed lesson's own figures (lesson 08 of the unit): a drift in a reference shows here.
SEED_FIGURES = {"12.serial_time": 64, "12.double_buffer_time": 46, "12.scalars_three_tiles": 768}


def _value(q, v):
    """Function questions take the function itself; other questions its (lazy) value."""
    return v if isinstance(q.kind, Function) else evaluate(v)


def test_the_issue_s_questions_are_there():
    assert {"12.serial_time", "12.double_buffer_time", "12.scalars_three_tiles"} <= set(IDS)
    # part 2 (the Hopper ladder): bytes per stage, stages that fit, ring depth, the profile
    assert {"12.hopper_stage_bytes", "12.hopper_stages_fit", "12.ring_stages_needed",
            "12.wmma_bottleneck"} <= set(IDS)
    # part 2's own: what wgmma changes, setmaxnreg's registers, a decode shape, an FP8 slice
    assert {"12.wgmma_change", "12.consumer_registers", "12.idle_sms_decode",
            "12.fp8_slice_k"} <= set(IDS)


@pytest.mark.parametrize("qid, figure", sorted(SEED_FIGURES.items()))
def test_seed_figures(qid, figure):
    assert judge(qid, figure).status == PASS


@pytest.mark.parametrize("qid", IDS)
def test_reference_passes(qid):
    q = get_question(qid)
    r = judge(qid, _value(q, q.answer))
    assert r.status == PASS and bool(r), r.feedback


@pytest.mark.parametrize("qid", IDS)
def test_not_attempted_and_wrong_types(qid):
    assert judge(qid, ...).status == NOT_ATTEMPTED
    assert judge(qid, None).status == NOT_ATTEMPTED
    r = judge(qid, object())
    assert r.status == FAIL and "expected" in r.feedback


def test_an_unlisted_wrong_answer_gets_the_hint():
    r = judge("12.double_buffer_time", 50)
    assert r.status == FAIL and "Hint" in r.feedback


def test_mma_step_accepts_float32_and_float64_widening():
    assert judge("12.mma_step", lambda a, b, c: a.astype(np.float32) @ b.astype(np.float32) + c)
    assert judge("12.mma_step", lambda a, b, c: (a.astype(np.float64) @ b.astype(np.float64)
                                                 + c).astype(np.float32))
    assert judge("12.mma_step", lambda a, b, c: None).status == NOT_ATTEMPTED
    r = judge("12.mma_step", lambda a, b, c: 1 / 0)
    assert r.status == FAIL and "ZeroDivisionError" in r.feedback


def test_ring_questions_compute_what_the_kernels_use():
    from gemmlab.tensorcore import hopper
    assert judge("12.hopper_stage_bytes", hopper.get_stage("tma").stage_bytes).status == PASS
    assert judge("12.hopper_stages_fit", hopper.PIPELINE_STAGES).status == PASS
    assert judge("12.ring_stages_needed", 4).status == PASS     # 1 + ceil((0.2 + 1.0) / 0.55)



def test_the_profile_question_quotes_the_recorded_profile_and_the_exercise_the_same():
    profile = recorded("hopper_h200.json")["profile"]["wmma"]
    parts = {"tensor": "pipe_tensor", "shared": "wavefronts_mem_shared", "L2": "lts__t_sectors",
             "DRAM": "dram__throughput"}
    derived = {unit: round(next(v for k, v in profile.items() if part in k))
               for unit, part in parts.items()}
    assert l12.WMMA_PROFILE == derived
    stalls = {k.split("stalled_")[1].split("_per_issue")[0]: v for k, v in profile.items()
              if "stalled_" in k}
    assert l12.WMMA_TOP_STALLS == tuple(sorted(stalls, key=stalls.get, reverse=True)[:3])
    prompt = get_question("12.wmma_bottleneck").prompt
    figures = re.findall(r"(\d+)%", prompt)
    assert figures == [str(l12.WMMA_PROFILE[u]) for u in ("tensor", "shared", "L2", "DRAM")]
    cells = json.loads((ROOT / "solutions" / "12_tensor_cores_exercises.ipynb")
                       .read_text("utf-8"))["cells"]
    text = next("".join(c["source"]) for c in cells if "## 9. Reading a profile" in "".join(c["source"]))
    assert re.findall(r"(\d+)%", text) == figures
    assert all(stall in prompt and stall in text for stall in l12.WMMA_TOP_STALLS)


def test_peak_flops_is_not_all_that_matters():
    from gemmlab.grading import judge
    assert judge("12.peak_is_all", False).status == "pass"
    r = judge("12.peak_is_all", True)
    assert r.status == "fail" and "one roof" in r.feedback, r.feedback


@pytest.mark.parametrize("qid, answer, misconception", [
    ("12.wgmma_change", "a", "issued by a warpgroup, 4 warps together"),
    ("12.wgmma_change", "b", "runs asynchronously"),
    ("12.idle_sms_decode", 0, "K makes no tiles"),
    ("12.idle_sms_decode", 16, "the number of tiles, the SMs that work"),
    ("12.idle_sms_decode", 100, "128 x 128 tiles"),
    ("12.consumer_registers", 168, "splits the registers evenly"),
    ("12.consumer_registers", 244, "multiples of 8"),
    ("12.consumer_registers", 256, "leaves the producer none"),
    ("12.fp8_slice_k", 64, "FP16's slice"),
    ("12.fp8_slice_k", 32, "one FP8 wgmma instruction"),
])
def test_lesson_12b_questions_name_the_misconception_of_each_wrong_answer(qid, answer, misconception):
    r = judge(qid, answer)
    assert r.status == FAIL and misconception in r.feedback, r.feedback


def test_lesson_12b_answers_are_what_the_lesson_and_the_kernels_say():
    # 16 tiles of 128 x 256 for 128 x 4096 (section 15: "116 SMs idle"), the 240 registers the
    # ws kernel's consumers take, and the FP8 plan's slice against the FP16 one (section 16)
    from gemmlab.tensorcore import hopper
    assert judge("12.idle_sms_decode", 132 - hopper.plan("persistent", 128, 4096, 4096).units)
    assert judge("12.idle_sms_decode", 116) and judge("12.consumer_registers", 240)
    assert judge("12.fp8_slice_k", 2 * hopper.plan("persistent", 8192, 8192, 8192).bk)
    lesson = (ROOT / "notebooks" / "12b_hopper_ladder.ipynb").read_text(encoding="utf-8")
    assert "116 SMs" in lesson and "up to 240" in lesson
