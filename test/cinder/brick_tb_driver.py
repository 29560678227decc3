# A Cinder volume driver for brick's test bed.
#
# Why it exists: every driver Cinder ships either needs real storage (LVM
# needs device-mapper, which this host's kernel lacks) or, like
# cinder/tests/fake_driver.py, returns connection info without a portal, an
# IQN or a LUN. brick needs the real thing, so this driver keeps each volume
# as one sparse file and hands everything about exporting it to Cinder's own
# iSCSI target helper (the tgtadm code path that LVM+tgt uses in production).
# The connection info brick sees is therefore produced by unmodified Cinder
# code.
#
# Loaded with `volume_driver = brick_tb_driver.FileVolumeDriver`; the
# directory holding this file must be on PYTHONPATH (test/cinder/up.sh does
# that).

import errno
import os
import re
import shutil
import time

from oslo_config import cfg
from oslo_log import log as logging
from oslo_utils import importutils
from oslo_utils import units

from cinder import exception
from cinder import interface
from cinder.volume import configuration
from cinder.volume import driver
from cinder.volume.targets import nvmeof
from cinder.volume.targets import tgt

LOG = logging.getLogger(__name__)

file_opts = [
    cfg.StrOpt('brick_tb_data_dir',
               help='Directory that holds one sparse file per volume.'),
    cfg.IntOpt('brick_tb_capacity_gb', default=1000,
               help='Capacity reported to the scheduler. The files are '
                    'sparse, so this is a promise, not a reservation.'),
    cfg.StrOpt('brick_tb_nvme_format', default='old',
               choices=['old', 'new'],
               help='With target_helper = nvmet: the connection info '
                    'format, "old" as Cinder Zed sends it (nqn, '
                    'target_portal, ...), "new" as later releases do '
                    '(target_nqn, vol_uuid, portals).'),
    cfg.StrOpt('brick_tb_nvmet_dir',
               help='With target_helper = nvmet: the directory export '
                    'records go to; the guest\'s nvmet fixture '
                    '(test/guest/fixtures/nvmet.sh) applies them.'),
]

CONF = cfg.CONF
CONF.register_opts(file_opts, group=configuration.SHARED_CONF_GROUP)


class OptionalChapTgtAdm(tgt.TgtAdm):
    """Cinder's TgtAdm, plus honouring use_chap_auth = False.

    In this Cinder release the iSCSI target helpers always generate CHAP
    credentials and write them into the tgt target file; use_chap_auth is
    not consulted. brick must be tested against targets with and without
    CHAP, so when CHAP is off the credentials are dropped here, before the
    target file is written, and FileVolumeDriver stores no provider_auth
    (so initialize_connection reports no auth_method).
    """

    def create_iscsi_target(self, name, tid, lun, path,
                            chap_auth=None, **kwargs):
        if not self.configuration.safe_get('use_chap_auth'):
            chap_auth = None
        return super().create_iscsi_target(name, tid, lun, path,
                                           chap_auth=chap_auth, **kwargs)


class GuestNVMeT(nvmeof.NVMeOF):
    """Cinder's NVMeOF target, served by the kernel nvmet of a test guest.

    The host has no nvmet, so instead of configuring configfs itself this
    target writes an export record (<volume id>.export, KEY=VALUE lines) to
    brick_tb_nvmet_dir and waits until the guest's fixture, which watches
    that directory, has created the subsystem and namespace and answered
    with <volume id>.ready. Cinder's answer is therefore only given once the
    namespace exists, as with a real array. The old connection info comes
    from Cinder's own NVMeOF code; "new" rewrites it in the later format.
    """

    WAIT = 60

    def _dir(self):
        return self.configuration.safe_get('brick_tb_nvmet_dir')

    def _record(self, volume_id, ext):
        if not re.match(r'^[0-9a-f-]{36}$', volume_id):
            raise exception.InvalidVolume(reason='bad volume id')
        return os.path.join(self._dir(), volume_id + ext)

    def _wait(self, path, present):
        deadline = time.monotonic() + self.WAIT
        while os.path.exists(path) != present:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
        return True

    def create_nvmeof_target(self, volume_id, subsystem_name, target_ip,
                             target_port, transport_type, nvmet_port_id,
                             ns_id, volume_path):
        nqn = 'nqn.%s-%s' % (subsystem_name, volume_id)
        size = os.stat(volume_path).st_size
        text = ('NQN=%s\nNSID=%d\nUUID=%s\nNGUID=%s\nSIZE=%d\n' %
                (nqn, ns_id, volume_id, volume_id.replace('-', ''), size))
        os.makedirs(self._dir(), exist_ok=True)
        path = self._record(volume_id, '.export')
        with open(path + '.tmp', 'w') as f:
            f.write(text)
        os.rename(path + '.tmp', path)
        if not self._wait(self._record(volume_id, '.ready'), True):
            raise exception.VolumeBackendAPIException(
                data='the guest did not create the nvmet namespace for '
                     '%s within %ss' % (volume_id, self.WAIT))
        return {'location': self.get_nvmeof_location(
                    nqn, target_ip, target_port, transport_type, ns_id),
                'auth': ''}

    def delete_nvmeof_target(self, volume):
        try:
            os.unlink(self._record(volume['id'], '.export'))
        except FileNotFoundError:
            return
        if not self._wait(self._record(volume['id'], '.ready'), False):
            LOG.warning('the guest kept the nvmet namespace of %s',
                        volume['id'])

    def _nvme_format(self, volume):
        """The volume's metadata brick_tb_nvme_format ("old" or "new")
        wins over the backend's option, so one Cinder start serves both
        formats' volumes (TestNVMeoF: one restart fewer)."""
        try:
            fmt = (volume.metadata or {}).get('brick_tb_nvme_format')
        except Exception:  # no metadata loaded: the backend's option
            fmt = None
        if fmt in ('old', 'new'):
            return fmt
        return self.configuration.safe_get('brick_tb_nvme_format')

    def _get_connection_properties(self, volume):
        props = super()._get_connection_properties(volume)
        if self._nvme_format(volume) != 'new':
            return props
        ips = [props['target_portal']] + list(
            self.configuration.safe_get('iscsi_secondary_ip_addresses') or [])
        return {
            'target_nqn': props['nqn'],
            'vol_uuid': volume['id'],
            'ns_id': int(props['ns_id']),
            'portals': [[ip, int(props['target_port']),
                         props['transport_type']] for ip in ips],
        }

    def validate_connector(self, connector):
        # Zed asks for an iSCSI initiator here; NVMe needs the host NQN.
        if 'nqn' not in connector:
            raise exception.InvalidConnectorException(missing='nqn')
        return True


@interface.volumedriver
class FileVolumeDriver(driver.VolumeDriver):
    """Each volume is <brick_tb_data_dir>/<volume.name>, a sparse file."""

    VERSION = '1.0.0'
    CI_WIKI_NAME = 'brick_testbed'

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.configuration.append_config_values(file_opts)
        self.backend_name = (
            self.configuration.safe_get('volume_backend_name') or 'file')
        helper = self.configuration.safe_get('target_helper')
        if helper == 'tgtadm':
            target_class = 'brick_tb_driver.OptionalChapTgtAdm'
        elif helper == 'nvmet':
            target_class = 'brick_tb_driver.GuestNVMeT'
        else:
            target_class = self.target_mapping[helper]
        self.target_driver = importutils.import_object(
            target_class, configuration=self.configuration,
            executor=self._execute)
        self.protocol = self.target_driver.protocol

    @staticmethod
    def get_driver_options():
        return file_opts

    # ---- setup and stats ----

    def _data_dir(self):
        return self.configuration.safe_get('brick_tb_data_dir')

    def do_setup(self, context):
        os.makedirs(self._data_dir(), mode=0o700, exist_ok=True)

    def check_for_setup_error(self):
        if not self._data_dir() or not os.path.isdir(self._data_dir()):
            raise exception.VolumeBackendAPIException(
                data='brick_tb_data_dir %r is not a directory' %
                     self._data_dir())

    def _update_volume_stats(self):
        capacity = self.configuration.safe_get('brick_tb_capacity_gb')
        used = 0
        count = 0
        for entry in os.scandir(self._data_dir()):
            if entry.is_file():
                used += entry.stat().st_size
                count += 1
        provisioned = round(float(used) / units.Gi, 2)
        self._stats = {
            'volume_backend_name': self.backend_name,
            'vendor_name': 'brick test bed',
            'driver_version': self.VERSION,
            'storage_protocol': self.protocol,
            'pools': [{
                'pool_name': self.backend_name,
                'total_capacity_gb': capacity,
                'free_capacity_gb': max(capacity - provisioned, 0),
                'provisioned_capacity_gb': provisioned,
                'reserved_percentage': 0,
                'max_over_subscription_ratio': 1.0,
                'thin_provisioning_support': True,
                'thick_provisioning_support': False,
                'QoS_support': False,
                'multiattach': True,
                'total_volumes': count,
                'backend_state': 'up',
            }],
            'shared_targets': False,
        }

    def local_path(self, volume):
        return os.path.join(self._data_dir(), volume.name)

    def _path(self, obj):
        return os.path.join(self._data_dir(), obj.name)

    # ---- volume and snapshot lifecycle: plain file operations ----

    def _make_file(self, path, size_gb):
        # O_EXCL: a stale file from an earlier run must not be handed out
        # as a new volume with someone else's data in it.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.ftruncate(fd, size_gb * units.Gi)
        finally:
            os.close(fd)

    def _copy_file(self, src, dst, size_gb):
        """Copies src's data to a new file dst, keeping holes holes (a
        snapshot of a 1 GiB volume with 1 MiB written costs 1 MiB), then
        grows dst to size_gb (a clone or restore may be larger)."""
        with open(src, 'rb') as fin, open(dst, 'xb') as fout:
            end = os.fstat(fin.fileno()).st_size
            for start, stop in self._data_extents(fin.fileno(), end):
                self._copy_range(fin.fileno(), fout.fileno(), start, stop)
            fout.truncate(max(size_gb * units.Gi, end))
        os.chmod(dst, 0o600)

    @staticmethod
    def _data_extents(fd, end):
        """(start, stop) of every data extent of fd, by SEEK_DATA and
        SEEK_HOLE; a file system without them reports one extent."""
        off = 0
        while off < end:
            try:
                start = os.lseek(fd, off, os.SEEK_DATA)
            except OSError as e:
                if e.errno == errno.ENXIO:  # only a hole is left
                    return
                raise
            stop = os.lseek(fd, start, os.SEEK_HOLE)
            yield start, stop
            off = stop

    @staticmethod
    def _copy_range(fin, fout, start, stop):
        off = start
        while off < stop:
            n = os.copy_file_range(fin, fout, min(stop - off, 64 * units.Mi),
                                   off, off)
            if n == 0:
                raise exception.VolumeBackendAPIException(
                    data='short copy at offset %d' % off)
            off += n

    def _remove(self, path):
        try:
            os.unlink(path)
        except OSError as e:
            # Deleting something already gone is success.
            if e.errno != errno.ENOENT:
                raise

    def create_volume(self, volume):
        self._make_file(self.local_path(volume), volume.size)
        return {}

    def delete_volume(self, volume):
        self._remove(self.local_path(volume))

    def extend_volume(self, volume, new_size):
        os.truncate(self.local_path(volume), new_size * units.Gi)
        self.target_driver.extend_target(volume)

    def create_snapshot(self, snapshot):
        self._copy_file(self.local_path(snapshot.volume), self._path(snapshot),
                        snapshot.volume_size)

    def delete_snapshot(self, snapshot):
        self._remove(self._path(snapshot))

    def create_volume_from_snapshot(self, volume, snapshot):
        self._copy_file(self._path(snapshot), self.local_path(volume),
                        volume.size)
        return {}

    def create_cloned_volume(self, volume, src_vref):
        self._copy_file(self.local_path(src_vref), self.local_path(volume),
                        volume.size)
        return {}

    # ---- data path: delegated to Cinder's target helper ----

    def ensure_export(self, context, volume):
        return self.target_driver.ensure_export(
            context, volume, self.local_path(volume))

    def create_export(self, context, volume, connector):
        info = self.target_driver.create_export(
            context, volume, self.local_path(volume))
        auth = info['auth']
        if not self.configuration.safe_get('use_chap_auth'):
            auth = None
        return {'provider_location': info['location'],
                'provider_auth': auth}

    def remove_export(self, context, volume):
        self.target_driver.remove_export(context, volume)

    def initialize_connection(self, volume, connector):
        return self.target_driver.initialize_connection(volume, connector)

    def validate_connector(self, connector):
        return self.target_driver.validate_connector(connector)

    def terminate_connection(self, volume, connector, **kwargs):
        self.target_driver.terminate_connection(volume, connector, **kwargs)
