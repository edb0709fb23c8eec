"""Sequential probability ratio test on game pairs: "is the new version better?" with a stop.

A game pair (the same opening from both seats) scores 0, 0.5, 1, 1.5 or 2 for the tested bot;
the five counts are the *pentanomial* result. Pairs, not games, are the independent trials:
the two games of a pair share an opening and are correlated, which the trinomial (win, draw,
loss) model ignores and which makes it over- or under-confident.

The test is the generalized SPRT (GSPRT) of Michel Van den Bergh as fishtest and fastchess use
it. H0 says the bot is `elo0` stronger, H1 says `elo1`; each hypothesis is a constraint on the
pair-score distribution, and the log-likelihood ratio is

    LLR = sum_i n_i * log(p1_i / p0_i)

where p_j is the distribution closest to the observed one (the maximum-likelihood estimate)
that satisfies hypothesis j. The test stops when LLR leaves (log(beta/(1-alpha)),
log((1-beta)/alpha)): below accepts H0, above accepts H1; alpha is the chance of accepting H1
when H0 holds and beta the reverse.

Two models of Elo, as fishtest and fastchess offer:

- logistic: the expected score s of a pair (scaled to 0..1) is 1 / (1 + 10^(-elo/400)); the
  constraint is linear, sum p_i a_i = s, and the constrained MLE is p_i = q_i / (1 + theta
  (a_i - s)) with theta the root of a monotone function (Lagrange multipliers), found by
  bisection.
- normalized: t = (mean - 0.5) / stdev of the pair score, and elo = t * 800 / ln(10) / sqrt(2)
  (the scale that makes a normalized Elo close to a logistic one at a typical draw rate). The
  constraint is not linear; its MLE has the same form with a_i replaced by the gradient of the
  constraint at the current estimate, iterated to a fixed point.

Counts of zero are replaced by a small epsilon (fishtest's regularization): with an outcome
never seen, the constrained estimate for a hypothesis outside the observed range would not
exist. Pure Python, no I/O: the arena imports it for the runner and the report, tests check it
against closed forms and simulation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: pair score of each pentanomial outcome, scaled to 0..1 (0, 0.5, 1, 1.5, 2 points of 2)
PAIR_SCORES: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
#: normalized Elo per unit of t = (mean - 0.5) / stdev of the pair score
NELO_PER_T = 800.0 / math.log(10.0) / math.sqrt(2.0)
MODELS: tuple[str, ...] = ("logistic", "normalized")
Z975 = 1.959963984540054
_EPSILON = 1e-3


class SprtError(ValueError):
    """Parameters no test can have (elo0 >= elo1, alpha outside (0, 1), unknown model)."""


def score_from_elo(elo: float) -> float:
    """Expected score of a side `elo` stronger under the logistic model."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_from_score(score: float) -> float:
    """The logistic Elo difference whose expected score is `score` (0..1, exclusive)."""
    return -400.0 * math.log10(1.0 / score - 1.0)


@dataclass(frozen=True)
class SprtParams:
    """The hypotheses and error rates of one test."""

    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "logistic"

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise SprtError(f"model must be one of {', '.join(MODELS)}, got {self.model!r}")
        for name in ("alpha", "beta"):
            v = getattr(self, name)
            if not 0.0 < v < 0.5:
                raise SprtError(f"{name} must be between 0 and 0.5 (exclusive), got {v}")
        if not self.elo0 < self.elo1:
            raise SprtError(f"elo0 must be below elo1, got elo0={self.elo0}, elo1={self.elo1}")
        if self.model == "logistic" and max(abs(self.elo0), abs(self.elo1)) >= 1000:
            raise SprtError("logistic elo0/elo1 must be within (-1000, 1000)")

    @property
    def lower(self) -> float:
        """Accept H0 when the LLR falls to or below this."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """Accept H1 when the LLR rises to or above this."""
        return math.log((1.0 - self.beta) / self.alpha)

    def to_dict(self) -> dict[str, float | str]:
        return {
            "elo0": self.elo0,
            "elo1": self.elo1,
            "alpha": self.alpha,
            "beta": self.beta,
            "model": self.model,
        }


@dataclass(frozen=True)
class SprtState:
    """The test after some game pairs: its LLR, decision and the Elo estimate."""

    params: SprtParams
    pentanomial: tuple[int, ...]
    llr: float
    decision: str | None  # "H0", "H1" or None (continue)
    elo: float | None  # logistic Elo of the mean pair score
    elo_ci95: float | None  # half-width of the 95% interval
    nelo: float | None  # normalized Elo
    los: float | None  # likelihood of superiority, 0..1

    @property
    def pairs(self) -> int:
        return sum(self.pentanomial)

    @property
    def games(self) -> int:
        return 2 * self.pairs

    def to_dict(self) -> dict[str, object]:
        return {
            **self.params.to_dict(),
            "lower": self.params.lower,
            "upper": self.params.upper,
            "pentanomial": list(self.pentanomial),
            "pairs": self.pairs,
            "games": self.games,
            "llr": self.llr,
            "decision": self.decision,
            "elo": self.elo,
            "elo_ci95": self.elo_ci95,
            "nelo": self.nelo,
            "los": self.los,
        }

    def summary(self) -> str:
        """One line: decision, LLR and bounds, games, Elo +/- 95% and LOS."""
        p = self.params
        verdict = {"H1": "H1 accepted", "H0": "H0 accepted"}.get(self.decision or "", "running")
        if self.elo is not None:
            elo = f"{self.elo:+.1f}"
        elif self.pairs:
            elo = "+inf (a perfect score)" if self.pentanomial[4] else "-inf (a perfect score)"
        else:
            elo = "n/a"
        if self.elo is not None and self.elo_ci95 is not None:
            elo += f" +/- {self.elo_ci95:.1f}"
        los = "n/a" if self.los is None else f"{100 * self.los:.1f}%"
        return (
            f"SPRT [{p.elo0:g}, {p.elo1:g}] ({p.model}, alpha={p.alpha:g}, beta={p.beta:g}): "
            f"{verdict}; LLR {self.llr:.2f} ({p.lower:.2f}, {p.upper:.2f}); "
            f"games {self.games} ({self.pairs} pairs {list(self.pentanomial)}); "
            f"Elo {elo}; LOS {los}"
        )


def _distribution(counts: Sequence[float]) -> tuple[float, list[float]]:
    total = float(sum(counts))
    return total, [c / total for c in counts]


def _mean_var(probs: Sequence[float], scores: Sequence[float] = PAIR_SCORES) -> tuple[float, float]:
    mean = sum(p * a for p, a in zip(probs, scores, strict=True))
    var = sum(p * (a - mean) ** 2 for p, a in zip(probs, scores, strict=True))
    return mean, var


def _tilted(q: Sequence[float], h: Sequence[float]) -> list[float]:
    """The distribution p_i = q_i / (1 + theta h_i) with sum p_i h_i = 0 (sum p_i = 1 then).

    f(theta) = sum q_i h_i / (1 + theta h_i) decreases strictly in theta on the interval where
    every 1 + theta h_i > 0, from +inf to -inf when h takes both signs on q's support, so the
    root is found by bisection. If h has one sign on the support no such p exists; the caller
    regularizes the counts so that it always does.
    """
    support = [(qi, hi) for qi, hi in zip(q, h, strict=True) if qi > 0]
    hi_max = max(hv for _, hv in support)
    hi_min = min(hv for _, hv in support)
    if hi_max <= 0 or hi_min >= 0:
        raise ValueError("the constraint lies outside the observed outcomes")
    lo, up = -1.0 / hi_max, -1.0 / hi_min
    for _ in range(200):
        mid = 0.5 * (lo + up)
        f = sum(qi * hv / (1.0 + mid * hv) for qi, hv in support)
        if f > 0:
            lo = mid
        else:
            up = mid
        if up - lo <= 1e-15 * max(1.0, abs(mid)):
            break
    theta = 0.5 * (lo + up)
    p = [qi / (1.0 + theta * hv) if qi > 0 else 0.0 for qi, hv in zip(q, h, strict=True)]
    total = sum(p)
    return [x / total for x in p]


def mle_logistic(q: Sequence[float], score: float) -> list[float]:
    """The distribution closest to `q` (maximum likelihood) whose mean pair score is `score`."""
    return _tilted(q, [a - score for a in PAIR_SCORES])


def mle_normalized(q: Sequence[float], t: float) -> list[float]:
    """The distribution closest to `q` whose (mean - 0.5) / stdev equals `t`.

    Stationarity of the Lagrangian gives p_i = q_i / (1 + theta g_i) with g the gradient of
    the constraint (mean - 0.5) - t * stdev, shifted so that sum p_i g_i = 0 holds exactly when
    the constraint does: g_i = (a_i - 0.5) - t * stdev * (1 + ((a_i - mean) / stdev)^2) / 2.
    g depends on p, so the tilt is repeated until p no longer moves. Far from the answer (few
    pairs, a large t) g can have one sign on every outcome and the step does not exist, so t is
    approached by continuation from 0 (where the constraint is the linear mean = 0.5), in steps
    that shrink when one fails.
    """
    p = mle_logistic(q, 0.5)
    done, step = 0.0, t
    while done != t:
        target = t if abs(t - done) <= abs(step) else done + step
        try:
            p = _normalized_fixed_point(q, target, p)
        except ValueError:
            step /= 2
            if abs(step) < 1e-9:
                raise
            continue
        done = target
        step *= 2
    return p


def _normalized_fixed_point(q: Sequence[float], t: float, p: list[float]) -> list[float]:
    change = 1.0
    for _ in range(300):
        mean, var = _mean_var(p)
        sd = math.sqrt(max(var, 1e-12))
        g = [(a - 0.5) - t * sd * (1.0 + ((a - mean) / sd) ** 2) / 2.0 for a in PAIR_SCORES]
        new = _tilted(q, g)
        change = max(abs(x - y) for x, y in zip(new, p, strict=True))
        p = new
        # the root finding leaves a jitter of about 1e-11 with outcomes of very unequal counts
        if change < 1e-10:
            return p
    if change < 1e-7:
        return p
    raise ValueError("no convergence")


def regularize(counts: Sequence[int | float]) -> list[float]:
    """Zero counts become a small epsilon, so every hypothesis has a constrained estimate."""
    return [float(c) if c > 0 else _EPSILON for c in counts]


def llr(counts: Sequence[int | float], params: SprtParams) -> float:
    """The GSPRT log-likelihood ratio of H1 against H0 for pentanomial `counts`."""
    if len(counts) != 5:
        raise ValueError(f"expected 5 pentanomial counts, got {len(counts)}")
    if sum(counts) <= 0:
        return 0.0
    n, q = _distribution(regularize(counts))
    if params.model == "logistic":
        p0 = mle_logistic(q, score_from_elo(params.elo0))
        p1 = mle_logistic(q, score_from_elo(params.elo1))
    else:
        p0 = mle_normalized(q, params.elo0 / NELO_PER_T)
        p1 = mle_normalized(q, params.elo1 / NELO_PER_T)
    return n * sum(qi * math.log(a / b) for qi, a, b in zip(q, p1, p0, strict=True) if qi > 0)


def llr_brownian(counts: Sequence[int | float], params: SprtParams) -> float:
    """The classical normal approximation of the logistic LLR (cutechess's), for comparison:
    N (s1 - s0) (2 mean - s0 - s1) / (2 var). Close to `llr` for small Elo differences."""
    n, q = _distribution(regularize(counts))
    mean, var = _mean_var(q)
    s0, s1 = score_from_elo(params.elo0), score_from_elo(params.elo1)
    return n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)


def estimate(
    counts: Sequence[int],
) -> tuple[float | None, float | None, float | None, float | None]:
    """(logistic Elo, its 95% half-width, normalized Elo, LOS) from the pentanomial counts.

    The interval is the normal interval of the mean pair score (per-pair variance, so the
    correlation inside a pair is counted) mapped through the Elo curve, halved. A perfect score
    (every pair 2-0, or 0-2) has no finite Elo: None, and so has the interval when every pair
    scored the same.
    """
    n = sum(counts)
    if n == 0:
        return None, None, None, None
    _, q = _distribution([float(c) for c in counts])
    mean, var = _mean_var(q)
    se = math.sqrt(var / n)
    los = 0.5 * (1.0 + math.erf((mean - 0.5) / (math.sqrt(2.0) * se))) if se > 0 else None
    if los is None:
        los = 1.0 if mean > 0.5 else 0.0 if mean < 0.5 else 0.5
    if not 0.0 < mean < 1.0:
        return None, None, None, los
    elo = elo_from_score(mean)
    if var <= 0:
        return elo, None, None, los
    clip = 1e-6
    lo = elo_from_score(min(max(mean - Z975 * se, clip), 1 - clip))
    hi = elo_from_score(min(max(mean + Z975 * se, clip), 1 - clip))
    nelo = (mean - 0.5) / math.sqrt(var) * NELO_PER_T
    return elo, (hi - lo) / 2.0, nelo, los


def evaluate(counts: Sequence[int], params: SprtParams) -> SprtState:
    """The test's state after the game pairs counted in `counts` (losses first)."""
    value = llr(counts, params)
    decision = "H1" if value >= params.upper else "H0" if value <= params.lower else None
    elo, ci, nelo, los = estimate(counts)
    return SprtState(params, tuple(int(c) for c in counts), value, decision, elo, ci, nelo, los)
