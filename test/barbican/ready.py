"""Makes the test bed Keystone list this Barbican and checks that it serves.

    ready.py KEYSTONE_ENV_FILE BARBICAN_URL PID TIMEOUT

Registers a key-manager service and its public RegionOne endpoint (and
RegionGuest's, at the slirp gateway 10.0.2.2) when the catalog lacks them
(a Keystone cold start restores the seeded catalog, so every up.sh asks),
then waits until the member user lists secrets.
"""

import json
import sys
import time
import urllib.error
import urllib.request


def call(method, url, token=None, body=None):
    headers = {'Content-Type': 'application/json'}
    if token:
        headers['X-Auth-Token'] = token
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers=headers, method=method)
    with urllib.request.urlopen(req, timeout=20) as resp:
        text = resp.read()
        return resp, (json.loads(text) if text else None)


def token(env, user, password, project):
    resp, _ = call('POST', env['BRICK_TB_KEYSTONE_AUTH_URL'] + '/auth/tokens', body={'auth': {
        'identity': {'methods': ['password'], 'password': {'user': {
            'name': env[user], 'domain': {'id': 'default'}, 'password': env[password]}}},
        'scope': {'project': {'name': env[project], 'domain': {'id': 'default'}}}}})
    return resp.headers['X-Subject-Token']


def ensure_catalog(env, url):
    ks = env['BRICK_TB_KEYSTONE_AUTH_URL']
    tok = token(env, 'BRICK_TB_KEYSTONE_CLOUD_ADMIN_USER', 'BRICK_TB_KEYSTONE_CLOUD_ADMIN_PASSWORD',
                'BRICK_TB_KEYSTONE_CLOUD_ADMIN_PROJECT')
    _, got = call('GET', ks + '/services?type=key-manager', tok)
    if got['services']:
        svc = got['services'][0]['id']
    else:
        _, made = call('POST', ks + '/services', tok,
                       {'service': {'name': 'barbican', 'type': 'key-manager', 'enabled': True}})
        svc = made['service']['id']
    # RegionGuest is the same service at the slirp gateway, for brick in a
    # qemu guest (as the catalog's other RegionGuest endpoints).
    want = {'RegionOne': url, 'RegionGuest': url.replace('127.0.0.1', '10.0.2.2', 1)}
    _, eps = call('GET', ks + '/endpoints?service_id=%s&interface=public' % svc, tok)
    for ep in eps['endpoints']:
        if want.get(ep.get('region_id')) == ep['url']:
            del want[ep['region_id']]
        else:
            call('DELETE', ks + '/endpoints/' + ep['id'], tok)
    for region, u in want.items():
        call('POST', ks + '/endpoints', tok, {'endpoint': {
            'service_id': svc, 'interface': 'public', 'region_id': region, 'url': u}})


def running(pid):
    try:
        with open('/proc/%s/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] not in ('Z', 'X')
    except OSError:
        return False


def main(env_file, url, pid, timeout):
    env = dict(line.split('=', 1) for line in open(env_file).read().split('\n')
               if '=' in line and not line.startswith('#'))
    ensure_catalog(env, url)
    tok = token(env, 'BRICK_TB_KEYSTONE_MEMBER_USER', 'BRICK_TB_KEYSTONE_MEMBER_PASSWORD',
                'BRICK_TB_KEYSTONE_PROJECT')
    deadline = time.monotonic() + float(timeout)
    why = 'API not answering yet'
    while time.monotonic() < deadline:
        if not running(pid):
            sys.exit('barbican exited')
        try:
            resp, _ = call('GET', url + '/v1/secrets?limit=1', tok)
            if resp.status == 200:
                return
            why = 'list secrets: HTTP %d' % resp.status
        except (urllib.error.URLError, OSError) as e:
            why = str(e)
        time.sleep(0.3)
    sys.exit('not ready after %ss: %s' % (timeout, why))


if __name__ == '__main__':
    main(*sys.argv[1:])
