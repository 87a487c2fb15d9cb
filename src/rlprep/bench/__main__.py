"""``python -m rlprep.bench [options]``: the same as ``rlprep bench [options]`` (error:/fix: and exit 2 included)."""

import sys

from rlprep.cli import main

sys.exit(main(["bench", *sys.argv[1:]]))
