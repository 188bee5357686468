"""``FPMultiplier``: ``in_fmt x in_fmt -> out_fmt``, the product rounded once."""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Signal, signed

from golden.formats import BF16, FP32
from golden.ops import multiply_sr_bits
from golden.rounding import Rounding

from .ecp5_dsp import dsp_param, ecp5_multiply
from .float import CLASSES_LAYOUT, FloatLayout, operand_classes, significand
from .params import bool_param, format_param, rounding_param
from .pipeline import Delay, delayed, select
from .rounder import Rounder, signed_width
from .unit import ArithmeticUnit, UnitPlan

__all__ = ["FPMultiplier", "MultiplierPlan"]


class MultiplierPlan(UnitPlan):
    """``FPMultiplier``'s parameters (keyword-only, as the multiplier's) and pipeline."""

    #: Pipeline registers without reset (``pipeline.Stages``): the generic unit keeps them.
    _reset_less = False

    def __init__(self, *, in_fmt=BF16, out_fmt=FP32, rounding=Rounding.NEAREST_EVEN,
                 sr_bits=None, stages=0, mul_dsp="inferred", classified_b=False):
        self.in_fmt = format_param("in_fmt", in_fmt)
        self.classified_b = bool_param("classified_b", classified_b)
        self.out_fmt = format_param("out_fmt", out_fmt)
        self.mul_dsp = dsp_param(mul_dsp, self.in_fmt)
        self.rounding = rounding_param(rounding)
        rand_bits = multiply_sr_bits(self.in_fmt, self.out_fmt, self.rounding, sr_bits)
        super().__init__(rand_bits=rand_bits, stages=stages, cuts=self._cuts(rand_bits),
                         routes=("operands", "product"),                 # the DSP's input and output
                         reset_less=self._reset_less)

    def _cuts(self, rand_bits):
        fi, width = self.in_fmt, 2 * self.in_fmt.precision
        return [("input", Delay()),
                ("operands", Delay(1)),                     # classify; the significands' route to the DSP
                ("product", Delay(mul=1)),                  # in parallel: the exponent sum
                ("normalised", Delay(1, fi.exp_bits + 2)),  # product MSB picks shift and exponent
                *Rounder.cuts(self.out_fmt, width, fi.exp_bits + 3, self.rounding, rand_bits)]

    @property
    def exact(self) -> bool:
        """True when the significand product is never rounded."""
        return self.out_fmt.precision >= 2 * self.in_fmt.precision


class FPMultiplier(MultiplierPlan, ArithmeticUnit):
    """Floating-point multiplier in TPU mode (DAZ, FTZ, canonical NaN).

    Parameters (keyword-only)
    -------------------------
    in_fmt, out_fmt : FloatFormat or str
        Operand and result formats. When ``out_fmt`` holds the whole significand product
        (``out.precision >= 2 * in.precision``) there is no rounding logic and no ``rand``.
    rounding : Rounding or str
        ``rne``, ``rtz``, ``sr`` or ``sr-half``.
    sr_bits : int, optional
        ``rand`` width for ``sr`` (default: every discarded product bit, at most 32).
    stages : int
        Register stages, 0..``max_stages``, placed by estimated delay (hdl/pipeline.py) at
        the cut points: the significands (their own register beside the DSP), after the
        product (so the ``*`` sits alone between two registers, as a hard multiplier wants
        it), after normalisation, the rounder's, output, input; then a second register at the
        significands and after the product (the DSP's wires in a large array: 8 and 9).
    mul_dsp : str
        ``inferred`` (default): the significand product is a ``*`` that synthesis maps.
        ``ecp5``: an instantiated ECP5 MULT18X18D whose own input registers are the
        significands' first register and whose output register is the product's
        (hdl/ecp5_dsp.py; ``in_fmt`` at most 18 significand bits); the same bits and latency.
    classified_b : bool
        ``b``'s classes come on a port of their own, ``b_classes`` (``CLASSES_LAYOUT``: what
        ``operand_classes`` gives for ``b``), computed where ``b`` was stored: a processing
        element classifies a weight as it writes it, so the weight's select runs straight
        into the registers. The same bits and latency, given ``b_classes`` of ``b``.

    Ports: in ``a``, ``b``, [``b_classes``], [``rand``], ``valid_in``; out ``result``, ``flags``,
    ``valid_out``.
    """

    def _operands(self):
        classes = {"b_classes": CLASSES_LAYOUT} if self.classified_b else {}
        return {"a": self.in_fmt.width, "b": self.in_fmt.width, **classes}

    def _result_shape(self):
        return self.out_fmt.width

    def _normalised(self, m) -> dict:
        """The datapath up to the ``normalised`` cut point: ``sig`` (the product, MSB set
        unless a zero operand), its unbiased ``exp``, ``sign``, the special cases (``nan``,
        ``invalid``, ``special``: an inf or zero operand, ``any_inf``), ``valid``, [``rand``]."""
        fi = self.in_fmt
        cut = self._stages.cut
        rand = {"rand": self.rand} if self.rand_bits is not None else {}
        given = {"b_classes": self.b_classes.as_value()} if self.classified_b else {}
        v = cut(m, "input", a=self.a, b=self.b, valid=self.valid_in, **rand, **given)
        a, b = FloatLayout(fi)(v["a"]), FloatLayout(fi)(v["b"])
        b_classes = CLASSES_LAYOUT(v["b_classes"]) if self.classified_b else operand_classes(b)
        # A register of the significands' own (not shared with the classification) can sit
        # next to the DSP: a shared one is placed between the two and lengthens the route
        # into the DSP (docs/timing.md). It holds the mantissas; the hidden bits join after
        # it (``significand``).
        mantissas = {"man_a": a.mantissa, "man_b": b.mantissa} if self.mul_dsp == "inferred" else {}
        # Each operand's class goes through the register; the product's (NaN, invalid, an
        # inf or zero operand) is decided after it, beside the significands' multiply: the
        # whole decision before the register is four LUT levels from the input register to
        # ``operands_invalid``, among the element's slowest paths.
        classes = {f"{name}_{x}": c[name] for x, c in (("a", operand_classes(a)), ("b", b_classes))
                   for name in ("inf", "zero", "nan", "signalling")}
        v = cut(m, "operands", valid=v["valid"], **{k: v[k] for k in rand}, **mantissas,
                exp_a=a.exponent, exp_b=b.exponent, sign=a.sign ^ b.sign, **classes)
        any_inf = v["inf_a"] | v["inf_b"]
        any_zero = v["zero_a"] | v["zero_b"]
        inf_times_zero = any_inf & any_zero
        others = {k: x for k, x in v.items() if k not in ("man_a", "man_b", "exp_a", "exp_b", *classes)}
        others.update(nan=v["nan_a"] | v["nan_b"] | inf_times_zero,
                      invalid=v["signalling_a"] | v["signalling_b"] | inf_times_zero,
                      special=any_inf | any_zero, any_inf=any_inf)
        product = Signal(2 * fi.precision)                     # MSB at 2p-1 or 2p-2
        if self.mul_dsp == "inferred":
            m.d.comb += product.eq(significand(fi, v["man_a"]) * significand(fi, v["man_b"]))
            return self._normalise(m, cut(m, "product", product=product, exp_sum=v["exp_a"] + v["exp_b"], **others))
        # The block's registers are the first at each cut point; the hidden bits (constants)
        # join before the block, not through a fabric register.
        count = self._stages.count
        sig_a, sig_b = (significand(fi, delayed(m, man, max(count["operands"] - 1, 0), f"operands_{n}_f", self._reset_less))
                        for n, man in (("man_a", a.mantissa), ("man_b", b.mantissa)))
        p = ecp5_multiply(m, sig_a, sig_b, input_registers=count["operands"] > 0,
                          output_register=count["product"] > 0, name="dsp")
        m.d.comb += product.eq(p[:len(product)])
        v = cut(m, "product", exp_sum=v["exp_a"] + v["exp_b"], **others)
        v["product"] = delayed(m, product, max(count["product"] - 1, 0), "product_product_f", self._reset_less)
        return self._normalise(m, v)

    def _normalise(self, m, v) -> dict:
        """The ``normalised`` cut point's values from the ``product`` cut point's."""
        width = 2 * self.in_fmt.precision
        top = v["product"][width - 1]
        return self._stages.cut(m, "normalised", sig=select(top, v["product"], v["product"] << 1)[:width],
                                **self._exponent(m, v["exp_sum"], top),
                                **{k: x for k, x in v.items() if k not in ("product", "exp_sum")})

    def _exponent(self, m, exp_sum, top) -> dict:
        """The ``normalised`` cut point's exponent: ``exp``, the product's, unbiased, from
        the operands' exponent sum and the product's MSB ``top``."""
        fi = self.in_fmt
        lo, hi = -2 * fi.bias, 2 * fi.exp_max_field - 2 * fi.bias + 1
        exp = Signal(signed(signed_width(lo, hi)))
        m.d.comb += exp.eq(exp_sum - 2 * fi.bias + top)
        return {"exp": exp}

    def elaborate(self, platform):
        m = Module()
        fi, fo = self.in_fmt, self.out_fmt
        width = 2 * fi.precision
        v = self._normalised(m)
        m.submodules.rounder = rounder = Rounder(
            fmt=fo, width=width, exp_width=len(v["exp"]), rounding=self.rounding, rand_bits=self.rand_bits,
            stages=self._stages)
        m.d.comb += [
            rounder.sign.eq(v["sign"]), rounder.exp.eq(v["exp"]), rounder.sig.eq(v["sig"]),
            rounder.nan.eq(v["nan"]), rounder.invalid.eq(v["invalid"]), rounder.exact.eq(v["special"]),
            rounder.exact_bits.eq(Cat(Const(0, fo.man_bits), v["any_inf"].replicate(fo.exp_bits), v["sign"])),
        ]
        if self.rand_bits is not None:
            m.d.comb += rounder.rand.eq(v["rand"])
        self._drive_outputs(m, rounder, v["valid"])
        return m
