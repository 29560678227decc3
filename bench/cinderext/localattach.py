#!/usr/bin/python3
"""python-brick-cinderclient-ext's local-attach / local-detach, as a script.

The extension is not packaged in Debian; this script follows the steps of
its v3 flow (`cinder --os-volume-api-version 3.44 local-attach` and
`local-detach`, brick_cinderclient_ext.client.Client._attach / _detach)
on Debian's python3-cinderclient and python3-os-brick, so that
test/e2e/iscsi_bench_test.go can time it as a whole process against
`brick local-attach` / `local-detach` (issue #27). It is a benchmark
aid, not part of brick; bench/cinderext/README.md says where it may differ
from the real command.

Usage: localattach.py attach|detach VOLUME_ID [--multipath] [--nvme]
--nvme lets an NVMe-oF connection through to os-brick's NVMe-oF connector
(the extension itself refuses every protocol but iSCSI and RBD).
Environment: BRICK_CINDER_ENDPOINT (http://host:8776/v3), PROJECT;
OSLO_LOCK_PATH, the directory of os-brick's inter-process locks
(default /tmp/localattach-locks; attach and detach must share it);
BENCH_STEPS=1 prints "STEP <name> <seconds>" to stderr for each step,
BENCH_T0 (epoch seconds, taken just before the interpreter started) adds
the interpreter's start-up as the first step.
"""
import time

_T_START = time.time()

import json
import os
import socket
import sys
import uuid

from cinderclient import client as cinder_client
from cinderclient.contrib import noauth
from keystoneauth1 import session as ks_session
from os_brick.initiator import connector
from oslo_concurrency import lockutils

_STEPS = os.environ.get("BENCH_STEPS") == "1"
_last = [time.time()]


def step(name):
    """Prints the seconds since the previous step (BENCH_STEPS=1)."""
    now = time.time()
    if _STEPS:
        print("STEP %s %.3f" % (name, now - _last[0]), file=sys.stderr, flush=True)
    _last[0] = now


if _STEPS:
    if os.environ.get("BENCH_T0"):
        print("STEP interpreter-start %.3f" % (_T_START - float(os.environ["BENCH_T0"])), file=sys.stderr)
    print("STEP imports %.3f" % (_last[0] - _T_START), file=sys.stderr, flush=True)

ROOT_HELPER = "sudo"  # what the extension passes (brick_utils.get_root_helper)
API_VERSION = "3.44"  # the first microversion the extension's v3 flow uses


def volumes_client():
    auth = noauth.CinderNoAuthPlugin(
        user_id="brick", project_id=os.environ["PROJECT"],
        endpoint=os.environ["BRICK_CINDER_ENDPOINT"])
    return cinder_client.Client(API_VERSION, session=ks_session.Session(auth=auth))


def my_ip():
    # brick_utils.get_ip(None): the source address towards a public one.
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("8.8.8.8", 80))
        return s.getsockname()[0]
    finally:
        s.close()


def brick_connector(protocol, multipath):
    return connector.InitiatorConnector.factory(
        protocol, ROOT_HELPER, driver=None, execute=None,
        use_multipath=multipath, device_scan_attempts=3, do_local_attach=True)


def verify(protocol, nvme):
    # VerifyProtocol: the extension accepts iSCSI and RBD only.
    if nvme and protocol.upper() == "NVMEOF":
        return
    if protocol.upper() not in ("ISCSI", "RBD"):
        sys.exit("protocol %s not supported" % protocol)


def attach(cs, volume_id, multipath, nvme):
    props = connector.get_connector_properties(
        ROOT_HELPER, my_ip(), multipath=multipath, enforce_multipath=False,
        execute=None)
    step("get-connector-properties")
    info = cs.attachments.create(volume_id, props, str(uuid.uuid4()))
    step("cinder-attachments-create")
    conn = info["connection_info"]
    verify(conn["driver_volume_type"], nvme)
    dev = brick_connector(conn["driver_volume_type"], multipath).connect_volume(conn)
    step("os-brick-connect-volume")
    cs.attachments.complete(conn["attachment_id"])
    step("cinder-attachments-complete")
    return dev


def detach(cs, volume_id, multipath):
    atts = cs.attachments.list(search_opts={"volume_id": volume_id})
    if len(atts) != 1:
        sys.exit("volume %s has %d attachments" % (volume_id, len(atts)))
    step("cinder-attachments-list")
    att = cs.attachments.show(atts[0].id)
    step("cinder-attachments-show")
    conn = att.connection_info
    brick_connector(conn["driver_volume_type"], multipath).disconnect_volume(conn, {})
    step("os-brick-disconnect-volume")
    cs.attachments.delete(atts[0].id)
    step("cinder-attachments-delete")


def main():
    action, volume_id = sys.argv[1:3]
    # os-brick's connectors take oslo.concurrency file locks, which need a
    # lock_path; a service sets it in its config file, the extension's
    # user in theirs. Without one, connect_volume fails after the
    # attachment exists and leaves the volume 'attaching'.
    lockutils.set_defaults(os.environ.get("OSLO_LOCK_PATH") or "/tmp/localattach-locks")
    multipath = "--multipath" in sys.argv[3:]
    nvme = "--nvme" in sys.argv[3:]
    cs = volumes_client()
    step("cinder-client")
    if action == "attach":
        print(json.dumps(attach(cs, volume_id, multipath, nvme)))
    elif action == "detach":
        detach(cs, volume_id, multipath)
    else:
        sys.exit("unknown action " + action)


if __name__ == "__main__":
    main()
