"""Engression (Shen and Meinshausen 2023, "Engression: extrapolation through the lens of
distributional regression"), one of the comparators of paper 002's Fig. 5, written in NumPy for
a one-dimensional curve: x = ln s (data), y = ln l (loss).

The method: a generative model g(x, e) with noise e ~ N(0, I) put into the network's input, fitted
by minimising the energy score

    E|Y - g(X, e)| - 1/2 E|g(X, e) - g(X, e')|,

so that g(x, e) has the conditional distribution of Y given x; predictions are functionals of
g(x, .) (the mean by default). Noise entering before the nonlinearity ("pre-additive": here e is
put beside x into the first layer, which adds W_e e to W_x x before the first ReLU) is what lets
it extrapolate past the data.

Settings: those of the authors' Python package (`engression`, `engression(x, y)` with no
options, continuous response), which is not used because it needs PyTorch (docs/core/
reproduction.md, Fig. 5):
- network (`StoNet`, num_layer=2, hidden_dim=100, noise_dim=100, add_bn=True): the input
  [x, e] (1 + 100 values, e fresh N(0, I) at every evaluation) -> Linear(101, 100) ->
  BatchNorm1d(100) -> ReLU -> Linear(100, 1); PyTorch's default initialisation (weights and
  biases uniform in +-1/sqrt(fan_in)), BatchNorm's (scale 1, shift 0, momentum 0.1, eps 1e-5;
  batch statistics while training, running statistics when predicting);
- data standardised (`standardize=True`): x and y centred and divided by their sample standard
  deviations (n - 1), predictions mapped back;
- training: the two-sample energy loss (`energy_loss_two_sample`, beta = 1): with two draws
  g1, g2 per point, 1/2 mean|g1 - y| + 1/2 mean|g2 - y| - 1/2 mean|g1 - g2|; full batch (the
  default batch), 500 epochs, Adam with learning rate 1e-4 (betas 0.9 / 0.999, eps 1e-8); the
  gradients are written out by hand (|u| has derivative sign(u), 0 at 0, as in PyTorch);
- prediction (`predict`, target "mean", sample_size=100): the mean over 100 noise draws.
Arithmetic in float32, as PyTorch's default. Differences from the package: NumPy's random
numbers (a `numpy.random.Generator` seeded by the caller) instead of PyTorch's, so the two give
different but equally distributed fits; and the 100 prediction draws are common to every x (the
package draws new noise per x), which makes the predicted mean an exact piecewise-linear
function of x whose crossing of a level is found exactly (`Engression.first_crossing`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

HIDDEN = 100
NOISE_DIM = 100
EPOCHS = 500
LEARNING_RATE = 1e-4
ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8
BN_MOMENTUM = 0.1
BN_EPS = 1e-5
SAMPLE_SIZE = 100
DTYPE = np.float32


@dataclass(frozen=True)
class Engression:
    """A fitted one-dimensional engression model (module docstring): network parameters, the
    BatchNorm running statistics, the standardisation, and the prediction draws."""

    w_x: np.ndarray  # (H,) weights of x in the first layer
    w_e: np.ndarray  # (D, H) weights of the noise in the first layer
    b1: np.ndarray  # (H,)
    bn_scale: np.ndarray  # (H,)
    bn_shift: np.ndarray  # (H,)
    running_mean: np.ndarray
    running_var: np.ndarray
    w2: np.ndarray  # (H,)
    b2: float
    x_mean: float
    x_std: float
    y_mean: float
    y_std: float
    draws: np.ndarray  # (SAMPLE_SIZE, D) noise for the predictions

    def _units(self):
        """The prediction's hidden units as k_i u + c_ji (u the standardised x, j the draw)."""
        scale = self.bn_scale / np.sqrt(self.running_var + BN_EPS)
        k = (scale * self.w_x).astype(float)
        c = ((self.draws @ self.w_e + self.b1 - self.running_mean) * scale + self.bn_shift).astype(float)
        return k, c

    def samples(self, x) -> np.ndarray:
        """g(x, e_j) for the prediction draws e_j, on the original scale: (len(x), SAMPLE_SIZE)."""
        u = (np.asarray(x, dtype=float) - self.x_mean) / self.x_std
        k, c = self._units()
        hidden = np.maximum(u[:, None, None] * k[None, None, :] + c[None, :, :], 0.0)
        out = hidden @ self.w2.astype(float) + self.b2
        return out * self.y_std + self.y_mean

    def mean(self, x) -> np.ndarray:
        """The predicted conditional mean of y at each x (the package's default prediction)."""
        return self.samples(x).mean(axis=1)

    def first_crossing(self, x0: float, level: float) -> float:
        """The least x >= x0 where the predicted mean is <= level: x0 if it already is there, inf
        if it never gets there. The mean is piecewise linear in x (ReLU units, common draws):
        its kinks are swept in order, so the crossing is exact."""
        target = (level - self.y_mean) / self.y_std
        u0 = (float(x0) - self.x_mean) / self.x_std
        k, c = self._units()
        w2 = self.w2.astype(float)
        draws = c.shape[0]
        pre = k[None, :] * u0 + c
        value = float((np.maximum(pre, 0.0) @ w2).mean()) + self.b2
        if value <= target:
            return float(x0)
        active = (pre > 0.0) | ((pre == 0.0) & (k[None, :] > 0.0))
        slope = float((active * (k * w2)[None, :]).sum() / draws)
        with np.errstate(divide="ignore", invalid="ignore"):
            kinks = -c / k[None, :]
        change = np.broadcast_to(np.abs(k) * w2 / draws, c.shape)
        ahead = np.isfinite(kinks) & (kinks > u0)
        at, dslope = kinks[ahead], change[ahead]
        order = np.argsort(at, kind="stable")
        at, dslope = at[order], dslope[order]
        # value and slope just after each kink; the segment before kink m starts at kink m-1
        starts = np.concatenate([[u0], at])
        slopes = slope + np.concatenate([[0.0], np.cumsum(dslope)])
        values = value + np.concatenate([[0.0], np.cumsum(slopes[:-1] * np.diff(starts))])
        ends = np.concatenate([at, [math.inf]])
        with np.errstate(invalid="ignore", over="ignore"):
            end_values = values + slopes * (ends - starts)
        end_values[-1] = -math.inf if slopes[-1] < 0.0 else values[-1]
        hit = np.flatnonzero(end_values <= target)
        if hit.size == 0:
            return math.inf
        m = int(hit[0])
        u = starts[m] if values[m] <= target else starts[m] + (target - values[m]) / slopes[m]
        return float(u * self.x_std + self.x_mean)


def _layout():
    """Offsets of the parameters in the flat vector: name -> (start, shape)."""
    shapes = {
        "w_e": (NOISE_DIM, HIDDEN),
        "w_x": (HIDDEN,),
        "b1": (HIDDEN,),
        "bn_scale": (HIDDEN,),
        "bn_shift": (HIDDEN,),
        "w2": (HIDDEN,),
        "b2": (1,),
    }
    out, at = {}, 0
    for name, shape in shapes.items():
        out[name] = (at, shape)
        at += int(np.prod(shape))
    return out, at


LAYOUT, SIZE = _layout()


def _views(flat: np.ndarray) -> dict[str, np.ndarray]:
    return {name: flat[at : at + int(np.prod(shape))].reshape(shape) for name, (at, shape) in LAYOUT.items()}


def _energy_gradient(p: dict, u: np.ndarray, v: np.ndarray, noise: np.ndarray, g: dict):
    """One training evaluation: two draws g1, g2 of the network at every point (noise (2n, D), the
    first n rows for g1), BatchNorm on each draw's batch statistics; the energy loss
    1/2 mean|g1 - v| + 1/2 mean|g2 - v| - 1/2 mean|g1 - g2| is returned and its gradient written
    into `g` (views of one flat array), with the batch means and (biased) variances (2, H).
    Works in the arrays' own dtype (float32 in training, float64 in the gradient test)."""
    n = u.size
    dtype = noise.dtype.type
    z = (noise @ p["w_e"]).reshape(2, n, -1)
    z += u[:, None] * p["w_x"] + p["b1"]
    mu = z.mean(axis=1, keepdims=True)
    z -= mu  # centred
    var = np.einsum("knh,knh->kh", z, z)[:, None, :] / dtype(n)
    inv_sd = dtype(1.0) / np.sqrt(var + dtype(BN_EPS))
    z *= inv_sd  # zhat
    a = z * p["bn_scale"]
    a += p["bn_shift"]
    on = a > 0
    h = np.maximum(a, dtype(0))
    out = h @ p["w2"]
    out += p["b2"][0]  # (2, n)
    apart = np.sign(out[0] - out[1])
    loss = 0.5 * (np.abs(out[0] - v).mean() + np.abs(out[1] - v).mean() - np.abs(out[0] - out[1]).mean())
    d_out = np.stack([np.sign(out[0] - v) - apart, np.sign(out[1] - v) + apart])
    d_out *= dtype(0.5 / n)
    g["w2"][...] = np.einsum("kn,knh->h", d_out, h)
    g["b2"][0] = d_out.sum()
    d_a = d_out[:, :, None] * p["w2"]
    d_a *= on
    g["bn_scale"][...] = np.einsum("knh,knh->h", d_a, z)
    g["bn_shift"][...] = d_a.sum(axis=(0, 1))
    d_a *= p["bn_scale"]  # d zhat
    d_a -= d_a.mean(axis=1, keepdims=True)
    d_a -= z * (np.einsum("knh,knh->kh", d_a, z)[:, None, :] / dtype(n))  # zhat . (centred d zhat) = zhat . d zhat
    d_a *= inv_sd  # d z
    d_z = d_a.reshape(2 * n, -1)
    g["w_e"][...] = noise.T @ d_z
    g["w_x"][...] = u @ (d_a[0] + d_a[1])
    g["b1"][...] = d_z.sum(axis=0)
    return float(loss), mu[:, 0], var[:, 0]


def engression_fit(x, y, seed: int = 0, epochs: int = EPOCHS, learning_rate: float = LEARNING_RATE) -> Engression:
    """Fit engression to the points (x_i, y_i) (module docstring); deterministic given `seed`
    (the initial weights, the training noise and the prediction draws all come from
    `numpy.random.default_rng(seed)`). `epochs` and `learning_rate` are the package's defaults
    unless given."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-D arrays of one length, got shapes {x.shape} and {y.shape}")
    if x.size < 3 or not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError(f"engression needs at least three finite points, got {x.size}")
    with threadpool_limits(1):  # matrices of a few hundred rows: BLAS threads only cost (a lot, on a busy machine)
        return _fit(x, y, seed, epochs, learning_rate)


def _fit(x: np.ndarray, y: np.ndarray, seed: int, epochs: int, learning_rate: float) -> Engression:
    n = x.size
    rng = np.random.default_rng(seed)
    x_mean, x_std = float(x.mean()), float(x.std(ddof=1))
    y_mean, y_std = float(y.mean()), float(y.std(ddof=1))
    x_std = x_std if x_std > 0.0 else 1.0
    y_std = y_std if y_std > 0.0 else 1e-5
    u = ((x - x_mean) / x_std).astype(DTYPE)
    v = ((y - y_mean) / y_std).astype(DTYPE)

    flat = np.empty(SIZE, DTYPE)
    p = _views(flat)
    first, second = 1.0 / math.sqrt(1 + NOISE_DIM), 1.0 / math.sqrt(HIDDEN)  # PyTorch: +-1/sqrt(fan_in)
    p["w_e"][...] = rng.uniform(-first, first, (NOISE_DIM, HIDDEN))
    p["w_x"][...] = rng.uniform(-first, first, HIDDEN)
    p["b1"][...] = rng.uniform(-first, first, HIDDEN)
    p["bn_scale"][...] = 1.0
    p["bn_shift"][...] = 0.0
    p["w2"][...] = rng.uniform(-second, second, HIDDEN)
    p["b2"][...] = rng.uniform(-second, second, 1)
    grad = np.empty(SIZE, DTYPE)
    g = _views(grad)
    moment1 = np.zeros(SIZE, DTYPE)
    moment2 = np.zeros(SIZE, DTYPE)
    running_mean = np.zeros(HIDDEN, DTYPE)
    running_var = np.ones(HIDDEN, DTYPE)
    beta1, beta2 = ADAM_BETAS
    momentum = DTYPE(BN_MOMENTUM)
    unbiased = DTYPE(n / (n - 1))
    noise = np.empty((2 * n, NOISE_DIM), DTYPE)

    for step in range(1, epochs + 1):
        rng.standard_normal(out=noise, dtype=DTYPE)  # two draws per point
        _, mu, var = _energy_gradient(p, u, v, noise, g)
        # BatchNorm's running statistics: one update per forward pass, unbiased variance
        for j in range(2):
            running_mean = (1 - momentum) * running_mean + momentum * mu[j]
            running_var = (1 - momentum) * running_var + momentum * var[j] * unbiased
        # Adam (PyTorch's form)
        moment1 *= DTYPE(beta1)
        moment1 += DTYPE(1.0 - beta1) * grad
        moment2 *= DTYPE(beta2)
        moment2 += DTYPE(1.0 - beta2) * (grad * grad)
        denominator = np.sqrt(moment2)
        denominator /= DTYPE(math.sqrt(1.0 - beta2**step))
        denominator += DTYPE(ADAM_EPS)
        flat -= DTYPE(learning_rate / (1.0 - beta1**step)) * moment1 / denominator

    draws = rng.standard_normal((SAMPLE_SIZE, NOISE_DIM), dtype=DTYPE)
    q = {name: value.copy() for name, value in _views(flat).items()}
    return Engression(
        w_x=q["w_x"],
        w_e=q["w_e"],
        b1=q["b1"],
        bn_scale=q["bn_scale"],
        bn_shift=q["bn_shift"],
        running_mean=running_mean,
        running_var=running_var,
        w2=q["w2"],
        b2=float(q["b2"][0]),
        x_mean=x_mean,
        x_std=x_std,
        y_mean=y_mean,
        y_std=y_std,
        draws=draws,
    )


def engression_need(model: Engression, eps: float, s_n: float) -> float:
    """S_hat = ceil(s* - s_n) >= 0 with s* the least data >= s_n at which the predicted mean of
    ln l reaches ln eps (the model fitted on x = ln s, y = ln l); inf if it never does."""
    ln_s = model.first_crossing(math.log(s_n), math.log(eps))
    if math.isinf(ln_s) or ln_s > 700.0:
        return math.inf
    return max(float(math.ceil(math.exp(ln_s) - s_n)), 0.0)
