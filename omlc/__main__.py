import sys

from omlc.cli import main

sys.exit(main())
