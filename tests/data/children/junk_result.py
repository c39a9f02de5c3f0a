"""Stand-in smoke child: writes junk instead of a JSON result and exits 0."""

import sys

out = sys.argv[sys.argv.index("--out") + 1]
open(out, "w").write("this is not json {")
print("lots of stdout junk")
