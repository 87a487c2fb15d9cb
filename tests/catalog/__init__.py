"""Bug catalogs: realistic wrong implementations of each graded function, one module per lab.

Each module exposes ``BUGS = {"function_name": [buggy_fn, ...]}``; every buggy function has the graded
signature and a docstring naming its bug. ``tests/catalog/properties.py`` holds the property checks that
catch them (``tests/test_algos_catalogs.py``); lab authors run the same catalogs against their notebook
test cells (each bug must fail at least one test cell).
"""
