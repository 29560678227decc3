"""Serves Barbican's API on 127.0.0.1 behind keystonemiddleware, one
process, one thread per request, without a paste file (python3-barbican
ships none; barbican-api would pull in a web server).

    serve.py BARBICAN_CONF PORT
"""

import socketserver
import sys
from wsgiref import simple_server


class Server(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    daemon_threads = True


def under_v1(wsgi, versions):
    # The v1 controller is the application's root: serve it under /v1 and
    # the version document at /, unauthenticated, as Barbican's paste
    # urlmap does (clients such as gophercloud read / to check that the
    # catalog's endpoint speaks v1).
    def app(environ, start_response):
        path = environ.get('PATH_INFO', '')
        if path in ('', '/'):
            return versions(environ, start_response)
        if path != '/v1' and not path.startswith('/v1/'):
            start_response('404 Not Found', [('Content-Type', 'text/plain')])
            return [b'not found\n']
        environ['SCRIPT_NAME'] = environ.get('SCRIPT_NAME', '') + '/v1'
        environ['PATH_INFO'] = path[3:] or '/'
        return wsgi(environ, start_response)
    return app


def main(conf_file, port):
    del sys.argv[1:]
    from barbican.common import config
    config.parse_args(config.CONF, default_config_files=[conf_file])
    from barbican.api import app
    from barbican.api.middleware import context
    from keystonemiddleware import auth_token
    api = app.create_main_app({})
    # The order of Barbican's own keystone pipeline: authtoken, then context.
    wsgi = auth_token.AuthProtocol(context.ContextMiddleware(api),
                                   {'oslo_config_config': config.CONF})
    srv = simple_server.make_server('127.0.0.1', port, under_v1(wsgi, app.create_version_app({})), server_class=Server)
    srv.serve_forever()


if __name__ == '__main__':
    main(sys.argv[1], int(sys.argv[2]))
