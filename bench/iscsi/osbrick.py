#!/usr/bin/python3
"""Drive os-brick's ISCSIConnector for bench.sh.

Usage: osbrick.py ACTION CONNECTION_INFO.json single|mp LOCK_PATH [DEVICE.json]

ACTION is one of:
  timed       connect_volume + disconnect_volume in this one process; prints
              one JSON line {"connect": s, "disconnect": s, "path": ...}
              timing the two calls only (not Python's start-up or imports).
              Between the two calls it checks for the file
              /brick-bench-mark-connect-done (which never exists): under
              strace that access() call marks where connect ends, so the
              commands each call started can be counted apart.
  connect     connect_volume only; prints the device info as one JSON line
              (the caller saves it to DEVICE.json), like `cinder local-attach`.
  disconnect  disconnect_volume with the device info read from DEVICE.json,
              like `cinder local-detach`.
  extend      extend_volume on an attached volume (its map and every path),
              after the backend grew it; prints one JSON line
              {"extend": s, "size": bytes} timing the call only.
The connect and disconnect actions are meant to be timed from outside, as
whole processes. Runs as root with privsep in-process, as
python-brick-cinderclient-ext does.

With OSBRICK_GO=FILE in the environment the process imports os-brick, then
waits until FILE exists before it reads CONNECTION_INFO.json and acts: a
caller starts it early (and niced), so that the imports (a minute under
TCG) overlap its other steps; it then returns to priority 0 (root).
"""
import json
import os
import sys
import time

from oslo_concurrency import lockutils
from os_brick import privileged
from os_brick.initiator import connector

action, info_file, mode, lock_path = sys.argv[1:5]
go = os.environ.get("OSBRICK_GO")
if go:
    while not os.path.exists(go):
        time.sleep(0.1)
    # The caller may have niced the imports; the timed part (and the
    # commands it starts) runs at normal priority, as brick's does.
    os.setpriority(os.PRIO_PROCESS, 0, 0)
lockutils.set_defaults(lock_path)
privileged.default.set_client_mode(False)
with open(info_file) as f:
    info = json.load(f)
props = info.get("data", info)
# "iser" volumes take os-brick's ISER protocol: its iSCSI connector on the
# iser transport.
protocol = "ISER" if info.get("driver_volume_type") == "iser" else "ISCSI"
conn = connector.InitiatorConnector.factory(
    protocol, None, use_multipath=(mode == "mp"), device_scan_attempts=3)

if action == "timed":
    t0 = time.monotonic()
    dev = conn.connect_volume(props)
    t1 = time.monotonic()
    os.access("/brick-bench-mark-connect-done", os.F_OK)
    t1b = time.monotonic()
    conn.disconnect_volume(props, dev)
    t2 = time.monotonic()
    print(json.dumps({"connect": t1 - t0, "disconnect": t2 - t1b,
                      "path": dev.get("path")}))
elif action == "connect":
    print(json.dumps(conn.connect_volume(props)))
elif action == "disconnect":
    with open(sys.argv[5]) as f:
        dev = json.load(f)
    conn.disconnect_volume(props, dev)
elif action == "extend":
    t0 = time.monotonic()
    size = conn.extend_volume(props)
    print(json.dumps({"extend": time.monotonic() - t0, "size": size}))
else:
    sys.exit("unknown action " + action)
