import sys

from rlprep.cli import main

sys.exit(main())
