#!/usr/bin/python3
"""Time os-brick's ISCSIConnector.connect_volume + disconnect_volume once.

Usage: osbrick.py CONNECTION_INFO.json single|mp LOCK_PATH
Prints one JSON line: {"connect": s, "disconnect": s, "path": ...}.
The times cover the two calls only (not Python's start-up or imports).
Runs as root with privsep in-process, as python-brick-cinderclient-ext does.
"""
import json
import sys
import time

from oslo_concurrency import lockutils
from os_brick import privileged
from os_brick.initiator import connector

info_file, mode, lock_path = sys.argv[1:4]
lockutils.set_defaults(lock_path)
privileged.default.set_client_mode(False)
with open(info_file) as f:
    info = json.load(f)
props = info.get("data", info)
conn = connector.InitiatorConnector.factory(
    "ISCSI", None, use_multipath=(mode == "mp"), device_scan_attempts=3)
t0 = time.monotonic()
dev = conn.connect_volume(props)
t1 = time.monotonic()
conn.disconnect_volume(props, dev)
t2 = time.monotonic()
print(json.dumps({"connect": t1 - t0, "disconnect": t2 - t1, "path": dev.get("path")}))
