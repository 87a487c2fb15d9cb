"""A class through nbgrader end to end: simulated students, nbgrader's exchange, a SQLite or PostgreSQL gradebook.

- ``students``: what each simulated student hands in (reference, catalogued bug, untouched, late, deleted test
  cell, syntax error, sabotage) and the grade the lab's tests give it;
- ``cycle``: one course folder driven through nbgrader's commands (generate, release, fetch, submit, collect,
  autograde, generate_feedback, export) with the course's grading config;
- ``gradebook``: the gradebook URL checked (reachable, SQLite or PostgreSQL) and described (server version);
- ``simulate``: the whole run and its comparison with the expected grades; ``cli``: ``rlprep classroom``.
"""
