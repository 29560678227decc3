"""Seeds the test bed Keystone's database in-process (no HTTP round trips).

Run by test/keystone/up.sh after `keystone-manage db_sync`, `fernet_setup`
and `credential_setup`, with Debian's /usr/bin/python3:

    seed.py KEYSTONE_CONF PORT

It runs keystone-manage bootstrap's own code (admin user and project, roles
admin/member/reader, RegionOne, identity endpoints), then adds the catalog
and users brick's tests need, switches the sqlite file to WAL (oslo.db opens
a transaction for reads too: with the default journal a second writer fails
with "database is locked") and prints KEY=VALUE lines for the env file.
"""

import sqlite3
import sys
import uuid

import keystone.conf
from keystone.cmd.bootstrap import Bootstrapper
from keystone.common import provider_api
from keystone.common import sql

# Fixed test passwords: the service listens on loopback only.
ADMIN_PASSWORD = 'brick-tb-admin-pw'
USERS = {
    # env-file prefix: (user name, password, role on the brick project)
    'MEMBER': ('brick-member', 'brick-tb-member-pw', 'member'),
    'READER': ('brick-reader', 'brick-tb-reader-pw', 'reader'),
    'PROJECT_ADMIN': ('brick-admin', 'brick-tb-project-admin-pw', 'admin'),
}
SERVICE_USERS = {'CINDER': 'cinder', 'IRONIC': 'ironic'}
PROJECT = 'brick'

# Catalog: block storage under both type names gophercloud accepts, Ironic,
# in several regions with several interfaces, and a region with no service
# endpoint at all (for "no endpoint in this region" errors). RegionOne's
# public endpoints are the test bed's Cinder and Ironic in keystone mode
# (test/cinder's second API on 8786, test/ironic with
# BRICK_TB_IRONIC_AUTH=keystone on 6386); RegionGuest has the same as a
# qemu guest reaches them (the slirp gateway). The other addresses
# (127.0.0.2, 127.0.0.3) are free for tests to serve.
ENDPOINTS = [
    # (service name, type, region, interface, url)
    ('cinder', 'block-storage', 'RegionOne', 'public', 'http://127.0.0.1:8786/v3/%(project_id)s'),
    ('cinder', 'block-storage', 'RegionOne', 'internal', 'http://127.0.0.3:8776/v3/%(project_id)s'),
    ('cinder', 'block-storage', 'RegionGuest', 'public', 'http://10.0.2.2:8786/v3/%(project_id)s'),
    ('cinderv3', 'volumev3', 'RegionTwo', 'public', 'http://127.0.0.2:8776/v3/%(project_id)s'),
    ('ironic', 'baremetal', 'RegionOne', 'public', 'http://127.0.0.1:6386'),
    ('ironic', 'baremetal', 'RegionOne', 'internal', 'http://127.0.0.3:6385'),
    ('ironic', 'baremetal', 'RegionTwo', 'public', 'http://127.0.0.2:6385'),
    ('ironic', 'baremetal', 'RegionGuest', 'public', 'http://10.0.2.2:6386'),
]
REGIONS = ['RegionTwo', 'RegionThree', 'RegionGuest']


def main(conf_file, port):
    conf = keystone.conf.CONF
    # As keystone-manage sets itself up (keystone.cmd.cli.main).
    keystone.conf.configure()
    sql.initialize()
    keystone.conf.set_default_for_default_log_levels()
    conf(args=[], project='keystone', default_config_files=[conf_file])
    keystone.conf.setup_logging()
    providers = provider_api.ProviderAPIs

    b = Bootstrapper()
    identity_url = 'http://127.0.0.1:%d/v3' % port
    b.admin_password, b.admin_username = ADMIN_PASSWORD, 'admin'
    b.project_name, b.admin_role_name = 'admin', 'admin'
    b.service_name, b.region_id = 'keystone', 'RegionOne'
    b.public_url = b.internal_url = b.admin_url = identity_url
    b.bootstrap()
    roles = {'admin': b.admin_role_id, 'member': b.member_role_id,
             'reader': b.reader_role_id}
    domain = b.default_domain_id

    def project(name):
        pid = uuid.uuid4().hex
        providers.resource_api.create_project(pid, {
            'id': pid, 'name': name, 'domain_id': domain, 'enabled': True,
            'description': 'brick test bed'})
        return pid

    def user(name, password, project_id, role):
        ref = providers.identity_api.create_user(user_ref={
            'name': name, 'password': password, 'domain_id': domain,
            'enabled': True})
        providers.assignment_api.add_role_to_user_and_project(
            user_id=ref['id'], project_id=project_id, role_id=roles[role])
        return ref['id']

    out = {
        'BRICK_TB_KEYSTONE_AUTH_URL': identity_url,
        'BRICK_TB_KEYSTONE_DOMAIN_ID': domain,
        'BRICK_TB_KEYSTONE_CLOUD_ADMIN_USER': 'admin',
        'BRICK_TB_KEYSTONE_CLOUD_ADMIN_PASSWORD': ADMIN_PASSWORD,
        'BRICK_TB_KEYSTONE_CLOUD_ADMIN_PROJECT': 'admin',
        'BRICK_TB_KEYSTONE_PROJECT': PROJECT,
    }
    brick = project(PROJECT)
    out['BRICK_TB_KEYSTONE_PROJECT_ID'] = brick
    for key, (name, password, role) in USERS.items():
        out['BRICK_TB_KEYSTONE_%s_USER' % key] = name
        out['BRICK_TB_KEYSTONE_%s_PASSWORD' % key] = password
        out['BRICK_TB_KEYSTONE_%s_USER_ID' % key] = user(name, password, brick, role)
    service = project('service')
    for key, name in SERVICE_USERS.items():
        password = 'brick-tb-%s-pw' % name
        user(name, password, service, 'admin')
        out['BRICK_TB_KEYSTONE_%s_USER' % key] = name
        out['BRICK_TB_KEYSTONE_%s_PASSWORD' % key] = password

    for region in REGIONS:
        providers.catalog_api.create_region(region_ref={'id': region})
    services = {}
    for name, stype, region, interface, url in ENDPOINTS:
        if name not in services:
            sid = uuid.uuid4().hex
            providers.catalog_api.create_service(sid, {
                'id': sid, 'name': name, 'type': stype, 'enabled': True})
            services[name] = sid
        eid = uuid.uuid4().hex
        providers.catalog_api.create_endpoint(eid, {
            'id': eid, 'service_id': services[name], 'region_id': region,
            'interface': interface, 'url': url, 'enabled': True})

    db = conf.database.connection[len('sqlite:///'):]
    with sqlite3.connect(db) as c:
        c.execute('PRAGMA journal_mode=WAL')
    for k, v in out.items():
        print('%s=%s' % (k, v))


if __name__ == '__main__':
    main(sys.argv[1], int(sys.argv[2]))
