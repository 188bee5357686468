"""golden.jax: the MXU's numerics in a JAX model (skipped, with the reason, without the
``jax`` extra)."""

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="the jax extra is not installed (pip install -e '.[jax]')")
jnp = pytest.importorskip("jax.numpy")

import golden  # noqa: E402
from golden.jax import dot  # noqa: E402


def _golden(a, b, precision):
    return golden.matmul(np.asarray(a, np.float32).view(np.uint32), np.asarray(b, np.float32).view(np.uint32),
                         precision=precision).y.view(np.float32)


@pytest.mark.parametrize("precision, name", [("BF16_BF16_F32", "BF16_BF16_F32"),
                                             (jax.lax.Precision.HIGH, "HIGH"),
                                             (jax.lax.DotAlgorithmPreset.BF16_BF16_F32_X6, "BF16_BF16_F32_X6")])
def test_dot_and_its_gradient_are_golden_matmuls(precision, name, rng):
    x = rng.standard_normal((6, 9)).astype(np.float32)
    w = rng.standard_normal((9, 4)).astype(np.float32)
    g = rng.standard_normal((6, 4)).astype(np.float32)
    assert np.array_equal(np.asarray(dot(x, w, precision=precision)), _golden(x, w, name))
    _, pullback = jax.vjp(lambda a, b: dot(a, b, precision=precision), x, w)
    gx, gw = pullback(jnp.asarray(g))
    assert np.array_equal(np.asarray(gx), _golden(g, w.T, name))
    assert np.array_equal(np.asarray(gw), _golden(x.T, g, name))
    jitted = jax.jit(lambda a, b: dot(a, b, precision=precision))(x, w)
    assert np.array_equal(np.asarray(jitted), _golden(x, w, name))
    batched = dot(np.stack([x, 2 * x]), w, precision=precision)
    assert batched.shape == (2, 6, 4) and np.array_equal(np.asarray(batched[0]), _golden(x, w, name))


@pytest.mark.parametrize("call, error, message", [
    (lambda: dot(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32), precision="F8"), ValueError,
     "precision 'F8': use one of"),
    (lambda: dot(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32), precision=("fp8_e4m3", "bf16")),
     ValueError, "works on float32, not bf16 accumulation"),
    (lambda: dot(np.ones((2, 3), np.float16), np.ones((3, 2), np.float32)), TypeError, "takes float32 arrays"),
    (lambda: dot(np.ones((2, 3), np.float32), np.ones((4, 2), np.float32)), ValueError, "the same K"),
])
def test_dot_refuses_what_it_does_not_support(call, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()


def test_jax_train_quick(tmp_path):
    from golden.experiments import main
    assert main(["jax-train", "--quick", "--variants", "jax-f32,mxu-x1,mxu-x1-bf16-sr", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "jax-train.csv").read_text()
    assert text.count("\n") == 1 + 3 * 2 and (tmp_path / "jax-train.png").exists()
