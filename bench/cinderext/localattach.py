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
Environment: BRICK_CINDER_ENDPOINT (http://host:8776/v3), PROJECT (noauth);
or OS_CLOUD and OS_CLIENT_CONFIG_FILE (a clouds.yaml entry: Keystone
password auth, Cinder and Barbican from the catalog; an encrypted volume
is then opened with os-brick's encryptor, its key read from Barbican, as
Nova does; the extension itself has no encryption support);
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


def keystone_session():
    """A Keystone password session for OS_CLOUD of OS_CLIENT_CONFIG_FILE
    (the clouds.yaml brick reads), and the cloud's region."""
    import yaml
    from keystoneauth1.identity import v3
    with open(os.environ["OS_CLIENT_CONFIG_FILE"]) as f:
        cloud = yaml.safe_load(f)["clouds"][os.environ["OS_CLOUD"]]
    a = cloud["auth"]
    auth = v3.Password(
        auth_url=a["auth_url"], username=a["username"], password=a["password"],
        project_name=a["project_name"], user_domain_id="default",
        project_domain_id="default")
    return ks_session.Session(auth=auth), cloud.get("region_name")


def volumes_client():
    """Cinder's client and, with OS_CLOUD, the Keystone session and region
    (the key manager is found through them); noauth otherwise."""
    if os.environ.get("OS_CLOUD"):
        sess, region = keystone_session()
        return cinder_client.Client(
            API_VERSION, session=sess, region_name=region,
            service_type="block-storage"), sess, region
    auth = noauth.CinderNoAuthPlugin(
        user_id="brick", project_id=os.environ["PROJECT"],
        endpoint=os.environ["BRICK_CINDER_ENDPOINT"])
    return cinder_client.Client(API_VERSION, session=ks_session.Session(auth=auth)), None, None


class _Key(object):
    def __init__(self, key):
        self._key = key

    def get_encoded(self):
        return self._key


class BarbicanKeys(object):
    """The key manager os-brick's encryptors ask: the secret's payload read
    from Barbican with the user's session (castellan's Barbican backend
    needs python3-barbicanclient, which Debian's guest does not have)."""

    def __init__(self, sess, region):
        self._sess, self._region = sess, region

    def get(self, context, key_id):
        url = self._sess.get_endpoint(
            service_type="key-manager", interface="public",
            region_name=self._region).rstrip("/")
        resp = self._sess.get(
            url + "/v1/secrets/%s/payload" % key_id,
            headers={"Accept": "application/octet-stream"})
        return _Key(resp.content)


def crypt_link(volume_id):
    # os-brick's encryptors replace the link they are given with one to
    # the dm-crypt device (named crypt-<link name>): give them a link of
    # their own, never the device node.
    return "/run/localattach/%s" % volume_id


def encryptor(cs, sess, region, volume_id):
    """os-brick's encryptor for the volume, or None when it is not
    encrypted (the metadata Nova reads: GET /volumes/{id}/encryption)."""
    meta = cs.volumes.get_encryption_metadata(volume_id)
    meta = getattr(meta, "_info", meta)
    if not meta or not meta.get("provider"):
        return None, None
    from os_brick import encryptors
    enc = encryptors.get_volume_encryptor(
        root_helper=ROOT_HELPER,
        connection_info={"data": {"device_path": crypt_link(volume_id)}},
        keymgr=BarbicanKeys(sess, region), **meta)
    return enc, meta


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


def attach(cs, sess, region, volume_id, multipath, nvme):
    props = connector.get_connector_properties(
        ROOT_HELPER, my_ip(), multipath=multipath, enforce_multipath=False,
        execute=None)
    step("get-connector-properties")
    # The extension passes a random instance uuid; Cinder (since the fix for
    # bug 2004555) then asks Nova about that instance before it deletes the
    # attachment, and the test bed has no Nova (HTTP 500). Without one, as
    # brick creates its attachments, Cinder asks no one.
    info = cs.attachments.create(volume_id, props)
    step("cinder-attachments-create")
    conn = info["connection_info"]
    verify(conn["driver_volume_type"], nvme)
    dev = brick_connector(conn["driver_volume_type"], multipath).connect_volume(conn)
    step("os-brick-connect-volume")
    if sess is not None:
        enc, meta = encryptor(cs, sess, region, volume_id)
        if enc is not None:
            os.makedirs(os.path.dirname(crypt_link(volume_id)), exist_ok=True)
            if os.path.lexists(crypt_link(volume_id)):
                os.unlink(crypt_link(volume_id))
            os.symlink(dev["path"], crypt_link(volume_id))
            enc.attach_volume(None, **meta)
            dev["path"] = os.path.realpath(crypt_link(volume_id))
            step("os-brick-encryptor-attach")
    cs.attachments.complete(conn["attachment_id"])
    step("cinder-attachments-complete")
    return dev


def detach(cs, sess, region, volume_id, multipath):
    atts = cs.attachments.list(search_opts={"volume_id": volume_id})
    if len(atts) != 1:
        sys.exit("volume %s has %d attachments" % (volume_id, len(atts)))
    step("cinder-attachments-list")
    att = cs.attachments.show(atts[0].id)
    step("cinder-attachments-show")
    conn = att.connection_info
    if sess is not None and os.path.lexists(crypt_link(volume_id)):
        enc, meta = encryptor(cs, sess, region, volume_id)
        if enc is not None:
            enc.detach_volume(**meta)
            os.unlink(crypt_link(volume_id))
            step("os-brick-encryptor-detach")
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
    cs, sess, region = volumes_client()
    step("cinder-client")
    if action == "attach":
        print(json.dumps(attach(cs, sess, region, volume_id, multipath, nvme)))
    elif action == "detach":
        detach(cs, sess, region, volume_id, multipath)
    else:
        sys.exit("unknown action " + action)


if __name__ == "__main__":
    main()
