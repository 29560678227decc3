#!/usr/bin/python3
"""Drive os-brick's RBDConnector (krbd) or NFS connector for the RBD and NFS
benchmark rounds of TestRBD and TestNFS (BRICK_BENCH=1).

Usage: osbrick.py rbd|nfs CONNECTION_INFO.json LOCK_PATH [MOUNT_BASE]

One process serves every round, so Python's start-up and imports (a minute
under TCG) are paid once and untimed: for each line read on stdin it runs
connect_volume + disconnect_volume and prints one JSON line
{"connect": s, "disconnect": s, "path": ...} timing the calls only, or
{"error": "..."} when a call failed. Runs as root with privsep in-process.

rbd: the properties Cinder's RBD driver sends plus do_local_attach, so
os-brick maps the image with the kernel's rbd module (`rbd map`).
nfs: export and name, mounted under MOUNT_BASE. os-brick's disconnect_volume
leaves the share mounted (Nova unmounts it itself), so "disconnect" also
times that umount; "umount" says how much of it that was.
"""
import json
import subprocess
import sys
import time

from oslo_concurrency import lockutils
from os_brick import privileged
from os_brick.initiator import connector

kind, info_file, lock_path = sys.argv[1:4]
lockutils.set_defaults(lock_path)
privileged.default.set_client_mode(False)
with open(info_file) as f:
    info = json.load(f)
props = dict(info.get("data", info))
if kind == "rbd":
    props["do_local_attach"] = True
    conn = connector.InitiatorConnector.factory(
        "RBD", None, do_local_attach=True)
elif kind == "nfs":
    conn = connector.InitiatorConnector.factory(
        "NFS", None, nfs_mount_point_base=sys.argv[4])
else:
    sys.exit("unknown kind " + kind)


def one_round():
    t0 = time.monotonic()
    dev = conn.connect_volume(props)
    t1 = time.monotonic()
    conn.disconnect_volume(props, dev)
    out = {"path": dev.get("path")}
    if kind == "nfs":
        t2 = time.monotonic()
        mount_point = dev["path"].rsplit("/", 1)[0]
        subprocess.run(["umount", mount_point], check=True,
                       capture_output=True, timeout=120)
        out["umount"] = time.monotonic() - t2
    out["connect"] = t1 - t0
    out["disconnect"] = time.monotonic() - t1
    return out


print(json.dumps({"ready": True}), flush=True)
for _ in sys.stdin:
    try:
        result = one_round()
    except Exception as e:  # the round's line says why; the caller goes on
        result = {"error": ("%s: %s" % (type(e).__name__, e))[:300]}
    print(json.dumps(result), flush=True)
