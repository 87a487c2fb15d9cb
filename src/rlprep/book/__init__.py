"""The course as a static website (``rlprep book``, ``make book``): Jupyter Book 2 / MyST, built offline.

``execute`` runs the walkthrough notebooks once per content hash (``static_widgets`` turns each slider into its default
figure), ``pages`` writes the MyST project (question pages, bank entries, labs, interviewer sheets), ``theme`` builds
the vendored book theme (``book/theme/``) with npm from its lockfile, and ``site`` runs Jupyter Book and checks that
the site loads nothing from outside.
"""
