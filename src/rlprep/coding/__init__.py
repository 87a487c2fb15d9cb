"""Coding rounds: a bank of timed, unseen hand-coding problems graded by hidden tests in the labs' sandbox.

bank (problem folders, validated) · checks (their code files) · sources (reference file, starter, bugs/variants,
trivial answers) · display (values as a learner reads them) · examples (visible examples as text) · testkit (what
tests.py is written with; what test cells call) · trl_reference (TRL's losses on given tensors) · grade (one file ->
a notebook -> IsolatedRunner, or in-process) · attempts (history, day-2/day-7 retests) · round (the timed round in a
terminal) · release (an nbgrader assignment) · cli (rlprep coding, rlprep mock --coding).
"""
