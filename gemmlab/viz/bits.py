"""The bit explorer of lesson 01: an ipywidgets panel that shows a floating-point number's bits.

Click a bit to flip it, or type a value (it is rounded to the format, to nearest even); pick the
format from the menu. The panel shows the sign, exponent and mantissa fields in colour, the
category (normal, subnormal, zero, inf, nan), the value as (-1)^s x significand x 2^e, its two
neighbours in the format and the spacing there.

    >>> e = bit_explorer("fp16")
    >>> e.set_value(2049.0); e.value        # 2049 is not an FP16 number: nearest even is 2048
    2048.0
    >>> e.toggle(15); e.value               # flip the last mantissa bit
    2050.0

Everything the panel shows is also reachable as attributes (``value``, ``bits``, ``category``,
``decoded``, ``fmt``) so tests and notebook cells can assert on it.
"""
import html
import math

import ipywidgets as widgets

from .. import precision as P

EXPLORER_FORMATS = ("fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2")

# (bit set, bit clear) colours per field
COLOURS = {"sign": ("#d9534f", "#f7dcdc"), "exponent": ("#337ab7", "#d9e8f5"),
           "mantissa": ("#3c9b3c", "#dcefdc")}
CATEGORY_COLOURS = {"normal": "#3c9b3c", "subnormal": "#e08a00", "zero": "#777777",
                    "inf": "#d9534f", "nan": "#8e44ad"}


def _field_of(i, f):
    if i == 0:
        return "sign"
    return "exponent" if i <= f.exponent_bits else "mantissa"


def _fmt_number(v):
    if v is None:
        return "-"
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return repr(v)
    return f"{v!r}" if abs(v) >= 1e-4 or v == 0 else f"{v:.10g}"


class BitExplorer(widgets.VBox):
    """The widget; build it with :func:`bit_explorer`."""

    def __init__(self, fmt="fp16", value=1.0, formats=EXPLORER_FORMATS):
        self._updating = False
        self.formats = tuple(P.get_format(f).name for f in formats)
        self.format_select = widgets.Dropdown(options=self.formats, value=P.get_format(fmt).name,
                                              description="format")
        self.value_text = widgets.Text(value=repr(float(value)), description="value",
                                       continuous_update=False,
                                       placeholder="a number, inf, nan, 1e-5 ...")
        self.bit_row = widgets.HBox(layout=widgets.Layout(flex_flow="row wrap"))
        self.legend = widgets.HTML()
        self.info = widgets.HTML()
        self.bit_buttons = []
        self.message = ""
        self._pattern = 0
        self._typed = None
        super().__init__([widgets.HBox([self.format_select, self.value_text]), self.legend,
                          self.bit_row, self.info])
        self.format_select.observe(self._on_format, names="value")
        self.value_text.observe(self._on_text, names="value")
        self._build_buttons()
        self.set_value(value)

    # --- state ------------------------------------------------------------------------------

    @property
    def fmt(self):
        return self.format_select.value

    @property
    def decoded(self):
        return P.decode(self.bits, self.fmt)

    @property
    def value(self):
        """The value the bits encode (a float)."""
        return P.from_bits(self._pattern, self.fmt)

    @property
    def bits(self):
        """The bits as "s eeeee mmmmmmmmmm"."""
        f = P.get_format(self.fmt)
        s = format(self._pattern, f"0{f.bits}b")
        return f"{s[0]} {s[1:1 + f.exponent_bits]} {s[1 + f.exponent_bits:]}"

    @property
    def category(self):
        return self.decoded.category

    # --- actions ----------------------------------------------------------------------------

    def set_value(self, x):
        """Store ``x`` rounded to the current format (round to nearest even)."""
        x = float(x)
        self._typed = x
        self._pattern = P.encode(x, self.fmt)
        self.message = ""
        self._refresh(text=repr(x))

    def set_bits(self, pattern):
        """Set the bits from an int or a string of 0/1 (spaces ignored)."""
        value = P.from_bits(pattern, self.fmt)          # validates the pattern
        self._pattern = int(pattern) if not isinstance(pattern, str) else int(
            pattern.replace(" ", "").replace("_", ""), 2)
        self._typed = None
        self.message = ""
        self._refresh(text=repr(value))

    def toggle(self, i):
        """Flip bit ``i``, counted from the left (0 is the sign bit)."""
        f = P.get_format(self.fmt)
        if not 0 <= i < f.bits:
            raise IndexError(f"{f.name} has bits 0..{f.bits - 1}, got {i}")
        self.set_bits(self._pattern ^ (1 << (f.bits - 1 - i)))

    def set_format(self, fmt):
        """Switch format; the current value is rounded to the new one."""
        self.format_select.value = P.get_format(fmt).name

    # --- callbacks --------------------------------------------------------------------------

    def _on_format(self, change):
        value = self._typed if self._typed is not None else P.from_bits(
            self._pattern, change["old"])
        self._build_buttons()
        self._pattern = P.encode(value, change["new"])
        self._refresh(text=self.value_text.value if self._typed is not None else repr(
            self.value))

    def _on_text(self, change):
        if self._updating:
            return
        text = change["new"].strip()
        try:
            x = float(text.replace("_", ""))
        except ValueError:
            self.message = f"could not read {text!r} as a number; the bits are unchanged"
            self._refresh()
            return
        self.set_value(x)
        self._set_text(text)

    def _click(self, button):
        self.toggle(button.index)

    # --- drawing ----------------------------------------------------------------------------

    def _build_buttons(self):
        f = P.get_format(self.fmt)
        buttons = []
        for i in range(f.bits):
            field = _field_of(i, f)
            if field == "exponent":
                tip = f"exponent bit (weight 2^{f.exponent_bits - i} in the field)"
            elif field == "mantissa":
                tip = f"mantissa bit (2^-{i - f.exponent_bits} of the significand)"
            else:
                tip = "sign bit"
            b = widgets.Button(description="0", tooltip=tip,
                               layout=widgets.Layout(width="26px", height="30px", padding="0",
                                                     margin="0 1px 0 0"))
            b.index = i
            b.field = field
            b.on_click(self._click)
            buttons.append(b)
        self.bit_buttons = buttons
        self.bit_row.children = buttons
        self.legend.value = (
            f"<span style='color:{COLOURS['sign'][0]}'>&#9632; sign (1 bit)</span> &nbsp; "
            f"<span style='color:{COLOURS['exponent'][0]}'>&#9632; exponent ({f.exponent_bits} "
            f"bits, bias {f.bias})</span> &nbsp; "
            f"<span style='color:{COLOURS['mantissa'][0]}'>&#9632; mantissa ({f.mantissa_bits} "
            f"bits)</span> &nbsp; <i>click a bit to flip it</i>")

    def _set_text(self, text):
        self._updating = True
        try:
            self.value_text.value = text
        finally:
            self._updating = False

    def _refresh(self, text=None):
        f = P.get_format(self.fmt)
        digits = format(self._pattern, f"0{f.bits}b")
        for b, d in zip(self.bit_buttons, digits, strict=True):
            b.description = d
            on, off = COLOURS[b.field]
            b.style.button_color = on if d == "1" else off
            b.style.text_color = "white" if d == "1" else "black"
        if text is not None:
            self._set_text(text)
        self.info.value = self._info_html()

    def _info_html(self):
        d = self.decoded
        f = P.get_format(self.fmt)
        cat = (f"<b style='color:{CATEGORY_COLOURS[d.category]}'>{d.category}</b>")
        sign, expo, mant = d.bits.split()
        rows = [
            ("fields", f"<span style='color:{COLOURS['sign'][0]}'>{sign}</span> "
                       f"<span style='color:{COLOURS['exponent'][0]}'>{expo}</span> "
                       f"<span style='color:{COLOURS['mantissa'][0]}'>{mant}</span>"),
            ("sign / exponent / mantissa field", f"{d.sign} / {d.exponent} / {d.mantissa}"),
            ("category", cat),
            ("value", f"<b>{_fmt_number(d.value)}</b> = {html.escape(d.formula)}"),
            ("neighbours", f"{_fmt_number(d.below)} &lt; value &lt; {_fmt_number(d.above)}"),
            ("spacing (ulp)", _fmt_number(d.spacing)),
        ]
        if d.category == "normal":
            rows.insert(2, ("exponent", f"{d.exponent} - bias {f.bias} = {d.power}"))
        if self._typed is not None and not (math.isnan(self._typed) and math.isnan(d.value)) \
                and self._typed != d.value:
            err = abs(self._typed - d.value) if math.isfinite(d.value) else math.inf
            rows.append(("rounding", f"typed {_fmt_number(self._typed)} is not a {f.name} number: "
                                     f"stored as {_fmt_number(d.value)} (error {_fmt_number(err)})"))
        body = "".join(f"<tr><td style='padding-right:1em'>{k}</td><td>{v}</td></tr>"
                       for k, v in rows)
        msg = f"<p style='color:#d9534f'>{html.escape(self.message)}</p>" if self.message else ""
        return f"{msg}<table style='font-family:monospace'>{body}</table>"


def bit_explorer(fmt="fp16", value=1.0, formats=EXPLORER_FORMATS):
    """Build the bit explorer (an ipywidgets VBox): display it as the last line of a cell."""
    return BitExplorer(fmt=fmt, value=value, formats=formats)
