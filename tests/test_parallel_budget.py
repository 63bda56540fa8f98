"""gemmlab.parallel.budget, the course's layer budget (lesson 15 and the lab 15.lab_budget): its
terms on lesson 15's grid, worked out here by hand from the formulas, and its checked settings."""
import pytest

from gemmlab.parallel import budget as model


def test_the_model_on_lesson_15s_grid():
    cfg = model.budget_config()
    terms = model.layer_budget(cfg)
    assert model.inside_one_node(cfg, ("tp",))                      # tp = 8 in a node of 8
    assert not model.inside_one_node(cfg, ("dp", "cp"))
    M, D, f = 4096, 8192, 4096
    ring = 2 * 7 * 5e-6 + 2 * 7 / 8 * M * D * 2 / 450e9
    assert terms["tp_allreduce"] == pytest.approx(2 * ring)
    grads = 2 * D * f * 2
    assert terms["dp_allreduce"] == pytest.approx((2 * 3 * 5e-6 + 2 * 3 / 4 * grads / 50e9) / 16)
    assert terms["pp_p2p"] == pytest.approx(2 * (5e-6 + M * D * 2 / 50e9) / 8)
    ideal = model.layer_budget({**cfg, "tile": 8192})["gemm"]       # tile >= every dimension
    assert ideal == pytest.approx(3 * 2 * 2 * M * f * D / cfg["peak_flops"])   # compute-bound
    assert terms["gemm"] > ideal                                    # 128-tiles re-read operands


def test_the_model_checks_its_configuration():
    with pytest.raises(ValueError, match="d_ff = 1001 must be divisible by tp = 8"):
        model.budget_config(d_ff=1001)
    with pytest.raises(ValueError, match="unknown budget settings"):
        model.budget_config(nodes=2)
    with pytest.raises(ValueError, match="tile must be a whole number"):
        model.budget_config(tile=1.5)
