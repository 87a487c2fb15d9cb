"""Lab 1's chain experiment: how λ trades the bias of an advantage estimate for its variance.

A chain of N states visited left to right, one step each; the episode ends after the last state. In every state
the policy picks action 0 or 1 at random; action a pays a mean reward of a with Gaussian noise of std σ_r, so the
true values are known: V(s) = 0.5 Σ_k γ^k over the remaining steps, Q(s, a) = a + γ V(s+1). The critic is wrong
by a fixed error per state, V̂ = V + ε_s. The estimand is Q(s_t, a_t) − V̂(s_t) (the advantage against the same
baseline), and over many episodes we measure the bias² and the variance of GAE's estimate for each λ
(Schulman et al. 2015, arXiv 1506.02438, Sec. 3).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Chain:
    """Sampled episodes of the chain; ``compute_gae`` is the learner's (or the reference) function."""

    n_states: int = 20
    gamma: float = 0.99
    reward_std: float = 1.0
    n_episodes: int = 1000
    seed: int = 0
    actions: np.ndarray = field(init=False, repr=False)  # (M, N)
    rewards: np.ndarray = field(init=False, repr=False)  # (M, N)
    state_noise: np.ndarray = field(init=False, repr=False)  # (N,) fixed direction of the critic's error

    def __post_init__(self):
        rng = np.random.default_rng(self.seed)
        self.actions = rng.integers(0, 2, size=(self.n_episodes, self.n_states))
        self.rewards = self.actions + self.reward_std * rng.normal(size=(self.n_episodes, self.n_states))
        self.state_noise = rng.normal(size=self.n_states)

    @property
    def true_v(self) -> np.ndarray:  # (N,) V^pi(s)
        steps_left = np.arange(self.n_states, 0, -1)
        return 0.5 * (1 - self.gamma ** steps_left) / (1 - self.gamma)

    @property
    def dones(self) -> np.ndarray:  # (N,) the episode ends at the last state
        d = np.zeros(self.n_states)
        d[-1] = 1.0
        return d

    def critic(self, critic_error: float) -> np.ndarray:  # (N,) V_hat
        return self.true_v + critic_error * self.state_noise


def bias_variance(compute_gae, chain: Chain, lam: float, critic_error: float):
    """(bias², variance, errors at t = 0) of GAE(γ, λ) against Q(s_t, a_t) − V̂(s_t), averaged over t."""
    v_hat = chain.critic(critic_error)  # (N,)
    next_true_v = np.append(chain.true_v[1:], 0.0)  # (N,)
    target = chain.actions + chain.gamma * next_true_v - v_hat  # (M, N)
    adv = np.stack([np.asarray(compute_gae(r, v_hat, chain.dones, 0.0, chain.gamma, lam)[0], dtype=float)
                    for r in chain.rewards])  # (M, N)
    err = adv - target  # (M, N)
    return float((err.mean(0) ** 2).mean()), float(err.var(0).mean()), err[:, 0]


def check_limits(compute_gae, chain: Chain, critic_error: float = 0.5) -> tuple[bool, bool]:
    """Print (and return) whether λ = 0 gives the TD residual and λ = 1 the Monte-Carlo return minus V̂."""
    v_hat, r, g = chain.critic(critic_error), chain.rewards[0], chain.gamma
    td = r + g * np.append(v_hat[1:], 0.0) * (1 - chain.dones) - v_hat
    mc = np.array([sum(g ** k * r[t + k] for k in range(chain.n_states - t)) for t in range(chain.n_states)])
    lam0 = bool(np.allclose(compute_gae(r, v_hat, chain.dones, 0.0, g, 0.0)[0], td))
    lam1 = bool(np.allclose(compute_gae(r, v_hat, chain.dones, 0.0, g, 1.0)[0], mc - v_hat))
    print(f"lam=0 equals the TD residual:        {lam0}")
    print(f"lam=1 equals MC return minus V_hat:  {lam1}")
    return lam0, lam1


def plot_bias_variance(compute_gae, chain: Chain, lam: float = 0.95, critic_error: float = 0.5,
                       lams=np.linspace(0, 1, 11)):
    """Left: bias², variance and MSE against λ (log scale). Right: the error histogram at t = 0 for ``lam``."""
    import matplotlib.pyplot as plt

    stats = [bias_variance(compute_gae, chain, float(lm), critic_error) for lm in lams]
    bias2, var = np.array([s[0] for s in stats]), np.array([s[1] for s in stats])
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    ax.plot(lams, bias2, "o-", label="bias²")
    ax.plot(lams, var, "s-", label="variance")
    ax.plot(lams, bias2 + var, "k--", label="MSE = bias² + variance")
    ax.axvline(lam, color="gray", lw=1)
    ax.set_yscale("log")
    ax.set_xlabel("λ (GAE lambda)")
    ax.set_ylabel("squared error (reward units²)")
    ax.set_title(f"Advantage estimate on a {chain.n_states}-state chain, critic error std {critic_error:.2f}")
    ax.legend()
    ax2.hist(bias_variance(compute_gae, chain, lam, critic_error)[2], bins=40)
    ax2.set_xlabel("A_0 − (Q(s_0,a_0) − V̂(s_0))  (reward units)")
    ax2.set_ylabel("episodes")
    ax2.set_title(f"Error of the estimate at t = 0, λ = {lam:.2f}")
    fig.tight_layout()
    return fig


def lambda_explorer(compute_gae, chain: Chain | None = None):
    """Sliders for λ and the critic's error over :func:`plot_bias_variance` (a static figure without a kernel)."""
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    chain = chain or Chain()

    def show(lam=0.95, critic_error=0.5):
        plot_bias_variance(compute_gae, chain, lam, critic_error)
        plt.show()

    return widgets.interact(show, lam=widgets.FloatSlider(value=0.95, min=0.0, max=1.0, step=0.05, description="λ"),
                            critic_error=widgets.FloatSlider(value=0.5, min=0.0, max=2.0, step=0.25,
                                                             description="critic err"))
