"""The allocation chain's fast paths against plain step-by-step matrix application."""

from __future__ import annotations

import numpy as np
import pytest

from engine import exact
from engine.profiles import Target


def _random_case(rng, models, wounds, t, loss_len):
    s = rng.random(models * wounds + 1)
    s[rng.random(s.size) < 0.3] = 0.0
    s /= s.sum()
    loss = rng.random(loss_len)
    loss /= loss.sum()
    weights = rng.random(t)
    weights /= weights.sum()
    return s, loss, weights


@pytest.mark.parametrize(("models", "wounds", "t", "loss_len"), [
    (1, 1, 3, 2), (3, 2, 10, 3), (5, 4, 40, 7), (20, 2, 300, 3), (8, 16, 280, 9), (2, 30, 600, 12), (20, 16, 70, 9)])
def test_renewal_mixture_equals_stepping(models, wounds, t, loss_len):
    rng = np.random.default_rng(models * 1000 + wounds * 10 + t)
    s, loss, weights = _random_case(rng, models, wounds, t, loss_len)
    target = Target(models=models, toughness=4, save=4, invulnerable=None, wounds=wounds)
    step = exact.make_step(loss, target, s)
    expected = exact.powers_mixture(s, step, weights)
    got = exact.renewal_mixture(s, loss, weights, wounds)
    np.testing.assert_allclose(got, expected, atol=1e-12, rtol=0)
    assert got.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(("models", "wounds", "t", "loss_len"), [(6, 1, 20, 2), (20, 2, 45, 3), (13, 3, 120, 5),
                                                            (40, 1, 17, 2), (9, 4, 600, 6)])
def test_renewal_from_the_first_model_doubles_exactly(models, wounds, t, loss_len):
    """States whose mass is only on the first model (a plan's operator rows: from (0, j)) take the
    doubling path for the models' death times (exact.DOUBLING_MIN_MODELS); same numbers as stepping."""
    assert models >= exact.DOUBLING_MIN_MODELS
    rng = np.random.default_rng(models * 100 + t)
    _, loss, weights = _random_case(rng, models, wounds, t, loss_len)
    s = np.zeros((wounds, models * wounds + 1))
    s[np.arange(wounds), np.arange(wounds)] = 1.0
    target = Target(models=models, toughness=4, save=4, invulnerable=None, wounds=wounds)
    step = exact.make_step(loss, target, s)
    got = exact.renewal_mixture(s, loss, weights, wounds)
    np.testing.assert_allclose(got, exact.powers_mixture(s, step, weights), atol=1e-12, rtol=0)


@pytest.mark.parametrize("size", [900, 2001])
def test_flat_block_step_equals_dense(size, monkeypatch):
    """Beyond DENSE_MAX_STATES the flat vector is stepped block-wise; same numbers as the dense matrix."""
    rng = np.random.default_rng(size)
    wounds = 9 if size == 900 else 20
    models = (size - 1) // wounds
    s, loss, _ = _random_case(rng, models, wounds, 2, 6)
    target = Target(models=models, toughness=4, save=4, invulnerable=None, wounds=wounds)
    dense = exact.dense_matrix(exact.step_matrix(loss, wounds), models)
    block = exact.make_step(loss, target, s)
    assert s.size > exact.DENSE_MAX_STATES
    np.testing.assert_allclose(block(s), s @ dense, atol=1e-14)


@pytest.mark.parametrize(("models", "wounds", "t", "rows"), [(3, 2, 12, 4), (6, 5, 90, 7), (4, 3, 300, 3)])
def test_batched_renewal_with_partial_weights(models, wounds, t, rows):
    """One weight row per devastating count (rows of a joint distribution, each summing to < 1)."""
    rng = np.random.default_rng(t + rows)
    s, loss, _ = _random_case(rng, models, wounds, t, 4)
    s[-1] = 0.2  # some mass already destroyed: it must be scaled by each row's total weight
    s /= s.sum()
    weights = rng.random((rows, t))
    weights /= weights.sum() * 1.5
    target = Target(models=models, toughness=4, save=4, invulnerable=None, wounds=wounds)
    step = exact.make_step(loss, target, s)
    got = exact.renewal_mixture(s, loss, weights, wounds)
    for r in range(rows):
        np.testing.assert_allclose(got[r], exact.powers_mixture(s, step, weights[r]), atol=1e-12, rtol=0)


@pytest.mark.parametrize(("models", "wounds", "t", "rows", "states"), [(3, 2, 12, 1, 5), (5, 3, 70, 4, 3), (4, 3, 300, 2, 4)])
def test_renewal_batched_over_states_and_weights(models, wounds, t, rows, states):
    """10e devastating wounds keep one state row per pending mortal-wound count."""
    rng = np.random.default_rng(7 * t + states)
    size = models * wounds + 1
    s = rng.random((states, size))
    s /= s.sum()
    loss = rng.random(5)
    loss /= loss.sum()
    weights = rng.random((rows, t))
    weights /= weights.sum()
    target = Target(models=models, toughness=4, save=4, invulnerable=None, wounds=wounds)
    step = exact.make_step(loss, target, s)
    got = exact.renewal_mixture(s, loss, weights, wounds)
    assert got.shape == (rows, states, size)
    for r in range(rows):
        np.testing.assert_allclose(got[r], exact.powers_mixture(s, step, weights[r]), atol=1e-12, rtol=0)
    single = exact.renewal_mixture(s, loss, weights[0], wounds)
    np.testing.assert_allclose(single, got[0], atol=1e-15)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("two_d", [False, True])
def test_compound_closed_form_equals_convolution(seed, two_d, monkeypatch):
    """The binomial / trinomial closed form of `compound` against the general path (convolutions in
    1-D, the FFT generating function in 2-D), over random die counts and kernels up to its limit."""
    rng = np.random.default_rng(seed)
    cmax = int(rng.integers(0, exact.CLOSED_FORM_MAX_DICE + 1)) if seed else exact.CLOSED_FORM_MAX_DICE
    counts = rng.random(cmax + 1)
    counts[: int(rng.integers(0, cmax + 1))] = 0.0
    counts[-1] += 0.1
    counts /= counts.sum()
    kernel = rng.random((2, 2) if two_d else 2)
    if two_d:
        kernel[1, 1] = 0.0
    kernel /= kernel.sum()
    got = exact.compound(counts, kernel)
    monkeypatch.setattr(exact, "CLOSED_FORM_MAX_DICE", -1)
    expected = exact.compound(counts, kernel)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, atol=1e-12, rtol=0)
    assert got.sum() == pytest.approx(1.0, abs=1e-12)
