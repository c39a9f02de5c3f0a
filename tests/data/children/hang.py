"""Stand-in smoke child: hangs in the device stage (a wedged GPU), with a grandchild too."""

import json
import subprocess
import sys
import time

out = sys.argv[sys.argv.index("--out") + 1]
json.dump({"format": 1, "finished": False, "stage": "device"}, open(out, "w"))
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
time.sleep(60)
