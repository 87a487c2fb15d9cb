"""The rlprep autograder: nbgrader release/autograde with the learner's code isolated from the tests.

- ``authoring``: build a solution notebook from cells (``md``, ``setup``, ``answer``, ``test``, ``demo``).
- ``release``: regenerate answer cells from the reference functions and run ``nbgrader generate_assignment``.
- ``executor``: the nbgrader preprocessor that runs learner cells in a kernel and test cells in the grader.
- ``kernel`` / ``wire``: the learner's kernel and the restricted (non-pickle) format for values crossing over.
- ``asserts``: the helpers test cells use; failures name the property, never the expected values.
- ``grade``: ``rlprep grade PATH.ipynb`` (self-grading against a cached gradebook).
"""
