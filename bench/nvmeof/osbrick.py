#!/usr/bin/python3
"""Drive os-brick's NVMeOFConnector for the NVMe benchmark of TestNVMeoF.

Usage: osbrick.py timed|connect|disconnect CONNECTION_INFO.json LOCK_PATH [DEVICE.json]

  timed       connect_volume + disconnect_volume in this one process; prints
              {"connect": s, "disconnect": s, "path": ...}, timing the two
              calls only (not Python's start-up or imports);
  connect     connect_volume only; prints the device info as one JSON line;
  disconnect  disconnect_volume with the device info from DEVICE.json.
Runs as root with privsep in-process, native multipath on, as
python-brick-cinderclient-ext would.
"""
import json
import sys
import time

from oslo_concurrency import lockutils
from os_brick import privileged
from os_brick.initiator import connector
from os_brick.initiator.connectors import nvmeof

# Debian 12's os-brick 6.1 matches a controller's sysfs "address" against
# "traddr=A,trsvcid=P" exactly, but kernel 6.1 appends ",src_addr=...", so
# it never finds the controllers it made (VolumeDeviceNotFound, controllers
# left behind). Later os-brick releases ignore src_addr; so does this shim.
_sysfs_property = nvmeof.sysfs_property


def _without_src_addr(prop_name, path):
    value = _sysfs_property(prop_name, path)
    if prop_name == 'address' and value:
        value = ','.join(p for p in value.split(',')
                         if not p.startswith('src_addr='))
    return value


nvmeof.sysfs_property = _without_src_addr

action, info_file, lock_path = sys.argv[1:4]
lockutils.set_defaults(lock_path)
privileged.default.set_client_mode(False)
with open(info_file) as f:
    info = json.load(f)
props = info.get("data", info)
conn = connector.InitiatorConnector.factory(
    "NVMEOF", None, use_multipath=True, device_scan_attempts=3)

if action == "timed":
    t0 = time.monotonic()
    dev = conn.connect_volume(props)
    t1 = time.monotonic()
    conn.disconnect_volume(props, dev)
    t2 = time.monotonic()
    print(json.dumps({"connect": t1 - t0, "disconnect": t2 - t1,
                      "path": dev.get("path")}))
elif action == "connect":
    print(json.dumps(conn.connect_volume(props)))
elif action == "disconnect":
    with open(sys.argv[4]) as f:
        dev = json.load(f)
    conn.disconnect_volume(props, dev)
else:
    sys.exit("unknown action " + action)
