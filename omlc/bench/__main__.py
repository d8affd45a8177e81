"""``python -m omlc.bench ARGS`` = ``omlc bench ARGS``."""
import sys

from omlc.cli import main

sys.exit(main(["bench"] + sys.argv[1:]))
