"""`python -m toolproxy.cli`."""

import sys

from toolproxy.cli.main import main

sys.exit(main())
