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
import shutil

from oslo_config import cfg
from oslo_log import log as logging
from oslo_utils import importutils
from oslo_utils import units

from cinder import exception
from cinder import interface
from cinder.volume import configuration
from cinder.volume import driver
from cinder.volume.targets import tgt

LOG = logging.getLogger(__name__)

file_opts = [
    cfg.StrOpt('brick_tb_data_dir',
               help='Directory that holds one sparse file per volume.'),
    cfg.IntOpt('brick_tb_capacity_gb', default=1000,
               help='Capacity reported to the scheduler. The files are '
                    'sparse, so this is a promise, not a reservation.'),
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
        # Sparse-aware copy is not needed for correctness; the files are
        # small in tests. Grow to the requested size afterwards.
        with open(src, 'rb') as fin, open(dst, 'xb') as fout:
            shutil.copyfileobj(fin, fout, 4 * units.Mi)
            fout.truncate(max(size_gb * units.Gi, fin.tell()))
        os.chmod(dst, 0o600)

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
