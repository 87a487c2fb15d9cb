"""Coding rounds: a bank of timed, unseen hand-coding problems graded by hidden tests in the labs' sandbox.

bank (problem folders, validated) · sources (reference file, starter, bugs/variants, trivial answers) ·
examples (visible examples as text) · testkit (what tests.py is written with; what test cells call) ·
grade (one file -> a notebook -> IsolatedRunner, or in-process) · attempts (history, day-2/day-7 retests) ·
round (the timed round in a terminal) · release (an nbgrader assignment) · cli (rlprep coding).
"""
