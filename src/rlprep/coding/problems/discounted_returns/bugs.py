"""Catalogued bugs of discounted_returns."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("ignores_dones", "sums across episode boundaries",
         {"gamma * (1.0 - float(dones[t])) * running": "gamma * running"}),
    Edit("done_drops_own_reward", "zeroes the terminal step's own reward too",
         {"running = float(rewards[t]) + gamma * (1.0 - float(dones[t])) * running":
          "running = (1.0 - float(dones[t])) * (float(rewards[t]) + gamma * running)"}),
    Edit("no_bootstrap", "starts from 0 instead of last_value",
         {"running = float(last_value)": "running = 0.0"}),
    Edit("forward_loop", "accumulates forwards in time",
         {"for t in reversed(range(rewards.shape[0])):": "for t in range(rewards.shape[0]):"}),
    Edit("discounts_the_reward", "discounts r_t itself: G_t = gamma * (r_t + G_{t+1})",
         {"running = float(rewards[t]) + gamma * (1.0 - float(dones[t])) * running":
          "running = gamma * (float(rewards[t]) + (1.0 - float(dones[t])) * running)"}),
]
