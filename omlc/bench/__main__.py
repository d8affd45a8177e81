"""``python -m omlc.bench``: the same as ``omlc bench``."""
import sys

from omlc.bench import main

sys.exit(main())
