"""The bit explorer, driven as a student would (clicks and typing), and the summation figure."""
import math

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from gemmlab import precision as P                                  # noqa: E402
from gemmlab.viz.bits import bit_explorer                           # noqa: E402
from gemmlab.viz.summation import plot_summation_errors             # noqa: E402


def test_typed_value_is_rounded_to_nearest_even():
    e = bit_explorer("fp16")
    e.set_value(2049.0)
    assert e.value == 2048.0 and e.bits == "0 11010 0000000000" and e.category == "normal"
    assert "stored as 2048.0" in e.info.value
    e.set_value(2051)
    assert e.value == 2052.0


def test_clicking_bits_changes_the_value_as_the_bits_say():
    e = bit_explorer("fp16", 2048.0)
    assert len(e.bit_buttons) == 16
    e.bit_buttons[-1].click()                       # last mantissa bit: + one ulp (2)
    assert e.value == 2050.0 and e.bits.endswith("1") and e.bit_buttons[-1].description == "1"
    e.bit_buttons[0].click()                        # sign
    assert e.value == -2050.0 and e.decoded.sign == 1
    e.toggle(0)
    e.set_bits("0 11110 1111111111")
    assert e.value == 65504.0 and e.decoded.above == math.inf
    e.bit_buttons[5].click()                        # exponent becomes 11111, mantissa != 0
    assert e.category == "nan" and math.isnan(e.value)
    e.set_bits(0b0_11111_0000000000)
    assert e.value == math.inf and e.category == "inf"
    e.set_bits(1)
    assert e.category == "subnormal" and e.value == 2.0**-24
    for i in range(16):                             # every single-bit flip agrees with from_bits
        before = int(e.bits.replace(" ", ""), 2)
        e.toggle(i)
        want = P.from_bits(before ^ (1 << (15 - i)), "fp16")
        assert e.value == want or (math.isnan(want) and math.isnan(e.value))
    with pytest.raises(IndexError):
        e.toggle(16)


def test_button_colours_follow_fields_and_bits():
    e = bit_explorer("bf16", 1.0)
    fields = [b.field for b in e.bit_buttons]
    assert fields == ["sign"] + ["exponent"] * 8 + ["mantissa"] * 7
    one = [b for b in e.bit_buttons if b.description == "1"]
    zero = [b for b in e.bit_buttons if b.description == "0"]
    assert {b.style.button_color for b in one}.isdisjoint({b.style.button_color for b in zero})


def test_typing_in_the_text_box():
    e = bit_explorer("fp16")
    e.value_text.value = "1e-7"
    assert e.category == "subnormal" and e.value == P.round_to(1e-7, "fp16")
    assert e.value_text.value == "1e-7"             # the student's text is kept
    e.value_text.value = "-inf"
    assert e.value == -math.inf and e.bits == "1 11111 0000000000"
    e.value_text.value = "not a number"
    assert e.value == -math.inf and "could not read" in e.info.value
    e.value_text.value = "0"
    assert e.category == "zero" and "could not read" not in e.info.value


def test_format_menu():
    e = bit_explorer("fp16", 2049.0)
    assert e.value == 2048.0
    e.set_format("fp32")
    assert len(e.bit_buttons) == 32 and e.value == 2049.0       # the typed value, re-rounded
    e.format_select.value = "bf16"
    assert len(e.bit_buttons) == 16 and e.value == 2048.0 and e.bits == "0 10001010 0000000"
    e.set_format("fp8_e4m3")
    e.set_value(1000)
    assert e.category == "nan"                                   # e4m3 has no inf
    e.set_format("fp8_e5m2")
    e.set_value(1000)
    assert e.value == 1024.0 and e.decoded.spacing == 256.0
    assert set(e.format_select.options) >= {"fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2"}
    e.set_format("tf32")
    e.set_bits(1)
    assert e.value == 2.0**-136 and e.category == "subnormal"
    with pytest.raises(ValueError):
        e.set_format("fp12")


def test_summation_figure():
    data = P.summation_errors(ns=[2, 16, 256, 4096])
    fig = plot_summation_errors(data)
    axes = fig.axes
    assert len(axes) == 3
    assert [ax.get_title().split()[0] for ax in axes] == ["fp16", "bf16", "fp32"]
    for ax in axes:
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
        assert len(ax.get_lines()) == 7              # 3 orders x (error, bound) + the u line
    seq = axes[0].get_lines()[0].get_ydata()
    assert np.nanmax(seq) == pytest.approx(data["errors"]["fp16", "sequential"].max())
    with pytest.raises(ValueError):
        plot_summation_errors(data, accs=("fp64",))
