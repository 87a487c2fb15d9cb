"""Bug catalogs: realistic wrong implementations of each graded function, one module per lab.

Each module exposes ``BUGS = {"function_name": [buggy_fn, ...]}``; every buggy function has the graded
signature and a docstring naming its bug. ``ALTERNATIVES`` (same shape) holds correct but differently
written answers (loops, other formulas, numpy): a lab's test cells must give them full marks.
``tests/catalog/properties.py`` holds the property checks that catch every bug and pass every alternative
(``tests/test_algos_catalogs.py``); lab authors run the same catalogs against their notebook test cells
(each bug must fail at least one test cell). ``lab01_gae.py`` is the grader's, in its own format.
"""
