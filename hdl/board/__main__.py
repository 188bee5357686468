import sys

from .bitstream import main

sys.exit(main())
