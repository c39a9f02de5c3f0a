"""Stand-in smoke child: aborts (SIGABRT) while importing TE, as a failed C++ assert would."""

import json
import os
import sys

out = sys.argv[sys.argv.index("--out") + 1]
json.dump({"format": 1, "finished": False, "stage": "import-te"}, open(out, "w"))
sys.stderr.write("terminate called after throwing an instance of 'std::runtime_error'\n")
sys.stderr.flush()
os.abort()
