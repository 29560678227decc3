# Runs cinder-api, cinder-scheduler and cinder-volume in ONE Python process
# for brick's test bed.
#
# Why one process: the services talk over oslo.messaging. With
# `transport_url = fake:/` (an in-memory transport) no RabbitMQ is needed, but
# the in-memory queues only exist inside one process, so all three services
# must share it. oslo.service's ServiceLauncher runs several services as
# green threads of the current process (Cinder's own entry points use
# ProcessLauncher, which forks and would split the queues).
#
# Why not RabbitMQ: it works the same way but costs ~8 s more per cold start
# (17-22 s against ~12.5 s here) and one more daemon to start and stop.
#
# Usage: /usr/bin/python3 launcher.py --config-file cinder.conf
# (Debian's python3, which can import Debian's cinder packages.)

import eventlet

# Monkey patching must happen before oslo.log and cinder are imported, as in
# Cinder's own cmd/*.py entry points.
eventlet.monkey_patch()

import __original_module_threading as orig_threading  # noqa: E402
import threading  # noqa: E402

# Same workaround Cinder's entry points apply for eventlet issue 592.
orig_threading.current_thread.__globals__['_active'] = threading._active

import logging as python_logging  # noqa: E402
import shlex  # noqa: E402
import sys  # noqa: E402

import os_brick  # noqa: E402
from oslo_config import cfg  # noqa: E402
from oslo_log import log as logging  # noqa: E402
from oslo_privsep import priv_context  # noqa: E402
from oslo_service import service as oslo_service  # noqa: E402

from cinder import i18n  # noqa: E402

i18n.enable_lazy()

from cinder.cmd import volume as volume_cmd  # noqa: E402,F401 (registers opts)
from cinder.common import config  # noqa: E402
from cinder.common import constants  # noqa: E402
from cinder import coordination  # noqa: E402
from cinder import objects  # noqa: E402
from cinder import rpc  # noqa: E402
from cinder import service  # noqa: E402
from cinder import utils  # noqa: E402
from cinder import version  # noqa: E402

CONF = cfg.CONF

# Keystone mode: a second API service, the same Cinder behind
# keystonemiddleware (paste app osapi_volume_keystone, which up.sh adds to
# api-paste.ini), while osapi_volume stays noauth. Port 0 turns it off.
CONF.register_opts([
    cfg.StrOpt('osapi_volume_keystone_listen', default='127.0.0.1'),
    cfg.PortOpt('osapi_volume_keystone_listen_port', default=0),
    cfg.IntOpt('osapi_volume_keystone_workers', default=1),
])


def main():
    objects.register_all()
    CONF(sys.argv[1:], project='cinder',
         version=version.version_string())
    config.set_middleware_defaults()
    logging.setup(CONF, 'cinder')
    python_logging.captureWarnings(True)
    log = logging.getLogger('brick_tb_launcher')

    # The volume service runs tgt-admin through privsep; the config file
    # points [cinder_sys_admin] helper_command at privsep-helper.
    priv_context.init(root_helper=shlex.split(utils.get_root_helper()))
    utils.monkey_patch()
    os_brick.setup(CONF)
    coordination.COORDINATOR.start()
    rpc.init(CONF)

    if not CONF.enabled_backends:
        log.error('enabled_backends is empty: no volume service to run')
        return 1

    launcher = oslo_service.ServiceLauncher(CONF, restart_method='mutate')

    api = service.WSGIService('osapi_volume')
    launcher.launch_service(api, workers=1)
    if CONF.osapi_volume_keystone_listen_port:
        launcher.launch_service(service.WSGIService('osapi_volume_keystone'),
                                workers=1)

    scheduler = service.Service.create(binary=constants.SCHEDULER_BINARY)
    launcher.launch_service(scheduler)

    for backend in filter(None, CONF.enabled_backends):
        CONF.register_opt(volume_cmd.host_opt, group=backend)
        host = '%s@%s' % (getattr(CONF, backend).backend_host or CONF.host,
                          backend)
        volume = service.Service.create(host=host,
                                        service_name=backend,
                                        binary=constants.VOLUME_BINARY,
                                        coordination=True)
        launcher.launch_service(volume)

    log.info('brick test bed: api, scheduler and %d volume service(s) '
             'launched in one process', len(CONF.enabled_backends))
    return launcher.wait()


if __name__ == '__main__':
    sys.exit(main())
