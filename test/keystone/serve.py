"""Serves Keystone's public WSGI application on 127.0.0.1, one process,
one thread per request (keystone-wsgi-public serves one request at a time).

    serve.py KEYSTONE_CONF PORT
"""

import os
import socketserver
import sys
from wsgiref import simple_server


class Server(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    daemon_threads = True


def main(conf_file, port):
    os.environ['OS_KEYSTONE_CONFIG_FILES'] = conf_file
    # The application parses sys.argv as oslo.config arguments.
    del sys.argv[1:]
    from keystone.server.wsgi import initialize_public_application
    app = initialize_public_application()
    srv = simple_server.make_server('127.0.0.1', port, app, server_class=Server)
    srv.serve_forever()


if __name__ == '__main__':
    main(sys.argv[1], int(sys.argv[2]))
