"""A throwaway PgBouncer (Debian's pgbouncer) on 127.0.0.1 for the tests: every
database of the test PostgreSQL, in transaction or session pooling mode. PgBouncer
refuses to run as root, so as root it runs as the `postgres` user (as pg-test.sh's
cluster does)."""
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse

PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Bouncer:
    def __init__(self, pg_url, mode="transaction", pool_size=20):
        u = urllib.parse.urlsplit(pg_url)
        self.pg_host, self.pg_port, self.user = u.hostname, u.port or 5432, u.username
        self.mode, self.pool_size = mode, pool_size
        self.dir = tempfile.mkdtemp(prefix="inkwell-bouncer-")
        self.port = None
        self.proc = None

    def write_config(self, servers=None):
        """servers: a libpq host list ("127.0.0.1,127.0.0.1" with ports) instead of the
        one test server (the cluster test's primary and standby)."""
        host = servers[0] if servers else self.pg_host
        port = servers[1] if servers else self.pg_port
        with open(os.path.join(self.dir, "userlist.txt"), "w") as f:
            f.write(f'"{self.user}" ""\n')
        with open(os.path.join(self.dir, "pgbouncer.ini"), "w") as f:
            f.write(f"""[databases]
* = host={host} port={port}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {self.port}
unix_socket_dir =
auth_type = trust
auth_file = {self.dir}/userlist.txt
pool_mode = {self.mode}
default_pool_size = {self.pool_size}
max_client_conn = 2000
server_reset_query = DISCARD ALL
server_check_delay = 0
server_login_retry = 1
# every test makes a database of its own: idle server connections to the ones before
# are closed at once, not after the default 600 s (which, 20 a database, took the test
# cluster past its 200 connections while the machine was loaded)
server_idle_timeout = 1
ignore_startup_parameters = extra_float_digits
logfile = {self.dir}/pgbouncer.log
pidfile = {self.dir}/pgbouncer.pid
""")

    def start(self, port=None, servers=None):
        self.port = port or self.port or free_port()
        self.write_config(servers)
        cmd = [PGBOUNCER, os.path.join(self.dir, "pgbouncer.ini")]
        if os.geteuid() == 0:
            subprocess.run(["chown", "-R", "postgres:postgres", self.dir], check=True)
            cmd = ["runuser", "-u", "postgres", "--"] + cmd
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.time() + 15
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"pgbouncer exited: {self.log()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("pgbouncer did not start")

    def url(self, database_url):
        """The URL of database_url's database through this bouncer."""
        db = urllib.parse.urlsplit(database_url).path.lstrip("/")
        return f"postgres://{self.user}@127.0.0.1:{self.port}/{db}"

    def log(self):
        try:
            with open(os.path.join(self.dir, "pgbouncer.log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()  # SIGTERM: immediate shutdown
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
