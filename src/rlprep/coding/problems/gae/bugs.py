"""Catalogued bugs of compute_gae."""

from rlprep.coding.sources import Edit

BUGS = [
    Edit("recursion_crosses_episodes", "cuts the bootstrap at a done but not the recursion: advantages leak back",
         {"lastgaelam = delta + gamma * lam * nextnonterminal * lastgaelam": "lastgaelam = delta + gamma * lam * lastgaelam"}),
    Edit("ignores_dones", "never looks at dones",
         {"nextnonterminal = 1.0 - dones[t]": "nextnonterminal = 1.0"}),
    Edit("no_bootstrap", "uses 0 for V(s_T) when the rollout is cut mid-episode",
         {"nextvalues = last_value if t == T - 1 else values[t + 1]": "nextvalues = 0.0 if t == T - 1 else values[t + 1]"}),
    Edit("returns_are_advantages", "returns the advantages as the value targets",
         {"returns = advantages + values": "returns = advantages"}),
    Edit("forgets_gamma_in_recursion", "decays the recursion by lam alone",
         {"lastgaelam = delta + gamma * lam * nextnonterminal * lastgaelam": "lastgaelam = delta + lam * nextnonterminal * lastgaelam"}),
    Edit("forward_loop", "runs the recursion forwards in time",
         {"for t in reversed(range(T)):": "for t in range(T):"}),
]
