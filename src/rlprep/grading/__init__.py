"""The rlprep autograder: nbgrader release/autograde with the learner's code isolated from the tests.

- ``authoring``: build a solution notebook from cells (``md``, ``setup``, ``answer``, ``test``, ``demo``).
- ``release``: regenerate answer cells from the reference functions and run ``nbgrader generate_assignment``.
- ``executor``: the nbgrader preprocessor that runs learner cells in a kernel and test cells in the grader.
- ``kernel`` / ``wire``: the learner's kernel and the restricted (non-pickle) format for values crossing over.
- ``asserts``: the helpers test cells use; failures name the property, never the expected values.
- ``grade``: ``rlprep grade PATH.ipynb`` (self-grading against a cached gradebook).
- ``sandbox``: the bubblewrap sandbox the learner's kernel runs in.
- ``templating``: fills a lab source's ``{{ name }}`` placeholders from its fixtures and recorded results.
- ``selfgrade``: ``grade_here()``, the "Grade yourself" cell.
"""


def grade_here(path=None) -> None:
    """Grade the saved copy of this lab notebook with the hidden tests and print the table (a lab's last cell)."""
    from rlprep.grading.selfgrade import grade_here as run

    run(path)
