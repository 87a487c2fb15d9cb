"""The class report's counting rules and page, without a class: properties of a test cell, which one a failure
names, passed/failed/unreached, and a page from hand-made results (tests/test_classroom.py runs a real class)."""

from __future__ import annotations

import datetime

from rlprep.classroom.report import render_html, summarise
from rlprep.classroom.results import (ClassResults, GradedCell, Lab, Property, Student, Submission, cell_properties,
                                      count_cells, failed_property)

SOURCE = """adv, ret = expect_tuple(compute_gae(x), 2, 'compute_gae must return (advantages, returns)')
assert_close(adv, [1.0], 'advantages on the example')
assert_close(ret, [2.0], 'returns must equal advantages + values')
### BEGIN HIDDEN TESTS
assert_close(adv, {{ case.advantages }}, prop='advantages wrong on a hidden rollout')
check(bool(ok), 'returns must equal advantages + values')
assert_close(adv, [1.0], 'advantages on the example and more')
### END HIDDEN TESTS
"""


def test_properties_in_order_of_first_use_with_the_hidden_ones_marked():
    assert cell_properties(SOURCE) == [
        Property("compute_gae must return (advantages, returns)", False),
        Property("advantages on the example", False),
        Property("returns must equal advantages + values", False),
        Property("advantages wrong on a hidden rollout", True),
        Property("advantages on the example and more", True)]
    assert cell_properties("this is not python (") == []


def test_a_failure_names_the_longest_property_it_starts_with():
    props = cell_properties(SOURCE)
    assert failed_property("advantages on the example (max abs error 0.5)", props).text == "advantages on the example"
    assert failed_property("advantages on the example and more", props).text == "advantages on the example and more"
    assert failed_property("advantages on the example: wrong shape (2,)", props).hidden is False
    assert failed_property("advantages on the examples", props) is None  # not a property followed by a detail
    assert failed_property("compute_gae raised ValueError", props) is None


def _results() -> ClassResults:
    test = GradedCell("t1", 2.0, cell_properties(SOURCE))
    lab = Lab("lab01", datetime.datetime(2026, 1, 1), 2.0, [test])
    subs = [Submission("a", "lab01", None, 2.0, 0.0, 0.0, {"t1": 2.0}),
            Submission("b", "lab01", None, 0.0, 0.0, 0.0, {"t1": 0.0},
                       {"t1": ("PropertyFailed", "advantages wrong on a hidden rollout")}),
            Submission("c", "lab01", None, 0.0, 0.0, 0.0, {"t1": 0.0},
                       {"t1": ("PropertyFailed", "advantages on the example (max abs error 1)")}),
            Submission("d", "lab01", None, 0.0, 0.0, 0.0, {"t1": 0.0}, {"t1": ("LearnerError", "x raised KeyError")}),
            Submission("e", "lab01", None, 2.0, 2.0, 60.0, {"t1": 2.0}),
            Submission("f", "lab01", None, 0.0, 0.0, 0.0, {"t1": None})]
    people = [Student(x) for x in "abcdefg"] + [Student("<i>h</i>", "=cmd", "<script>x</script>")]
    return ClassResults(people, [lab], subs)


def test_passed_failed_unreached():
    results = _results()
    (cell,) = count_cells(results.labs[0], results.of_lab("lab01"))
    assert (cell.full, cell.partial, cell.ungraded, cell.errors) == (2, 3, 1, {"LearnerError": 1})
    got = [(p.passed, p.failed, p.unreached) for p in cell.properties]
    # a, e passed everything; b failed on the 4th (passed the 3 before); c on the 2nd; d reached nothing
    assert got == [(4, 0, 1), (3, 1, 1), (3, 0, 2), (2, 1, 2), (2, 0, 3)]
    assert cell.pass_rate == 2 / 5 and cell.properties[1].pass_rate == 3 / 4


def test_summary_and_page():
    summary = summarise(_results())
    lab = summary["labs"][0]
    assert lab["scores"] == {"a": 2.0, "b": 0.0, "c": 0.0, "d": 0.0, "e": 0.0, "f": 0.0}  # e is late: 2 - 2
    assert (lab["mean"], lab["median"], lab["full_marks"], lab["late"]) == (round(2 / 6, 4), 0.0, 1, 1)
    assert [m["student"] for m in lab["missing"]] == ["g", "<i>h</i>"]
    assert [x["student"] for x in summary["late"]] == ["e"]
    page = render_html(summary, note="<b>note</b>")
    assert "<script>" not in page and "<i>h" not in page and "&lt;i&gt;h&lt;/i&gt; (=cmd &lt;script&gt;" in page
    assert "&lt;b&gt;note" in page and page.count("<img ") == 2
    assert "advantages wrong on a hidden rollout <span class=hidden>(hidden)</span>" in page
