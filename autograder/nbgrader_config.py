"""nbgrader configuration for instructors grading a class with rlprep's labs.

Run nbgrader from this folder (it reads this file from the working directory):

    cd autograder
    nbgrader generate_assignment lab01_gae --force      # solutions/ -> autograder/release/
    nbgrader collect / zip_collect ...                   # submissions -> autograder/submitted/<student>/<lab>/
    nbgrader autograde lab01_gae                         # learner code isolated from the tests
    rlprep classroom autograde --course . --lab lab01_gae --jobs 2   # the same with this file, 2 processes;
                                                         # formgrader's manual grades kept on a re-grade
    nbgrader generate_feedback lab01_gae                 # hidden tests cleared
    jupyter lab                                          # formgrader: Nbgrader > Formgrader (start it here:
                                                         # it reads this file, which sanitises what a
                                                         # submission's markdown and outputs show)

The gradebook is SQLite in this folder unless RLPREP_GRADEBOOK_URL is set, e.g.
``postgresql://grader:PASSWORD@db.example.edu/rlprep`` for a class on JupyterHub (driver: psycopg, in the
course extras). A rehearsal of the whole cycle with simulated students: ``rlprep classroom simulate``.
Timeouts: RLPREP_CALL_TIMEOUT (s per call of a learner function, 10), RLPREP_CELL_TIMEOUT (s per learner
cell, 30), RLPREP_GRADING_DEADLINE (s per notebook, 300).
"""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))  # a checkout without `pip install -e .` still finds rlprep

from rlprep.grading.release import apply_grading_config  # noqa: E402

c = get_config()  # noqa: F821 - provided by nbgrader when it loads this file

c.CourseDirectory.root = str(HERE)
c.CourseDirectory.course_id = os.environ.get("RLPREP_COURSE_ID", "rlprep")
c.CourseDirectory.source_directory = "../solutions"  # the nbgrader source notebooks live in solutions/<lab>/
c.CourseDirectory.db_url = os.environ.get("RLPREP_GRADEBOOK_URL", f"sqlite:///{HERE / 'gradebook.db'}")

apply_grading_config(c)  # restore deleted cells, isolated executor, ClearHiddenTests, sanitised pages (HTMLExporter)
c.IsolatedExecute.call_timeout = int(os.environ.get("RLPREP_CALL_TIMEOUT", "10"))
c.IsolatedExecute.cell_timeout = int(os.environ.get("RLPREP_CELL_TIMEOUT", "30"))
c.IsolatedExecute.deadline = int(os.environ.get("RLPREP_GRADING_DEADLINE", "300"))
