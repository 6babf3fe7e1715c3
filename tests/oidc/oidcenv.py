"""A real OpenID provider for the single sign-on tests (tests/http/test_oidc.py,
test_pg_oidc.py): oidc-provider from the npm registry (pinned in package.json and
package-lock.json beside this file; installed with `npm ci` when node_modules is missing
or older than the lock), run by provider.mjs on 127.0.0.1, and a person's browser driven
through it with plain HTTP (urllib and a cookie jar): inkwell's /auth/oidc/login, the
provider's authorization endpoint and its own sign-in form, and back to the callback."""
import html.parser
import http.cookiejar
import os
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

from harness import free_port  # (tests/http: the only users of this module)

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENT_ID = "inkwell-test"
CLIENT_SECRET = "oidc-test-client-secret-5d1c9a"  # must never reach inkwell's log


def npm_ci():
    mods = os.path.join(HERE, "node_modules")
    lock = os.path.join(HERE, "package-lock.json")
    stamp = os.path.join(mods, ".package-lock.json")
    if os.path.exists(stamp) and os.path.getmtime(stamp) >= os.path.getmtime(lock):
        return
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=HERE,
                   check=True, capture_output=True)


class Provider:
    """oidc-provider on a free port; redirect_uris: the callbacks it accepts."""

    def __init__(self, redirect_uris):
        self.redirect_uris = list(redirect_uris)
        self.proc = None

    def start(self):
        npm_ci()
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, OIDC_PORT=str(self.port), OIDC_CLIENT_ID=CLIENT_ID,
                   OIDC_CLIENT_SECRET=CLIENT_SECRET,
                   OIDC_REDIRECT_URIS=",".join(self.redirect_uris))
        self.proc = subprocess.Popen(["node", os.path.join(HERE, "provider.mjs")], env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # its first line says it listens (or why it could not)
        line = self.proc.stdout.readline()
        while line and not line.startswith("ready "):
            if "WARNING" not in line:
                raise RuntimeError(f"oidc-provider did not start: {line}")
            line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("oidc-provider exited before it listened")
        return self

    def tamper(self, mode):
        """ID tokens from now on: "" as made, or "aud", "expired", "signature", "nonce"."""
        req = urllib.request.Request(f"{self.issuer}/__test/tamper?mode={mode}", data=b"",
                                     method="POST")
        urllib.request.urlopen(req, timeout=30).read()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self.proc.stdout.close()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **kw):
        return None


class _Form(html.parser.HTMLParser):
    """The first form of a page: its action and its hidden inputs."""

    def __init__(self):
        super().__init__()
        self.action = None
        self.fields = {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form" and self.action is None:
            self.action = a.get("action")
        if tag == "input" and a.get("type") == "hidden" and a.get("name"):
            self.fields[a["name"]] = a.get("value", "")


class Answer:
    def __init__(self, status, headers, body, url):
        self.status, self.headers, self.body, self.url = status, headers, body, url

    def header(self, name):
        return self.headers.get(name)

    @property
    def text(self):
        return self.body.decode("utf-8", "replace")


class Browser:
    """A person's browser: one cookie jar for inkwell and the provider; redirects are
    followed by hand (each answer is looked at)."""

    def __init__(self, record=None, record_prefix=None):
        self.record, self.record_prefix = record, record_prefix  # inkwell's answers kept
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar),
                                                  _NoRedirect())

    def get(self, url, data=None):
        req = urllib.request.Request(url, data=urllib.parse.urlencode(data).encode()
                                     if data is not None else None)
        try:
            with self.opener.open(req, timeout=60) as r:
                a = Answer(r.status, r.headers, r.read(), url)
        except urllib.error.HTTPError as e:
            a = Answer(e.code, e.headers, e.read(), url)
        if self.record and self.record_prefix and url.startswith(self.record_prefix):
            path = url[len(self.record_prefix):]
            self.record("GET" if data is None else "POST", path, a.status,
                        list(a.headers.items()), a.body)
        return a

    def follow(self, a, stop_at):
        """Follows redirects from answer a until one goes to an address starting with
        stop_at (not fetched: returned as the Location) or a page is answered."""
        while a.status in (302, 303):
            loc = urllib.parse.urljoin(a.url, a.header("Location"))
            if loc.startswith(stop_at):
                return loc
            a = self.get(loc)
        return a

    def cookie(self, name):
        return next((c.value for c in self.jar if c.name == name), None)

    def sign_in_at_provider(self, start_url, login, callback_prefix):
        """From inkwell's /auth/oidc/login to the callback address the provider sends
        the browser to after its sign-in form (not fetched)."""
        a = self.get(start_url)
        assert a.status == 302, (a.status, a.text[:300])
        page = self.follow(a, callback_prefix)
        if isinstance(page, str):
            return page  # signed in at the provider already
        assert page.status == 200, (page.status, page.text[:300])
        f = _Form()
        f.feed(page.text)
        data = dict(f.fields, login=login, password="any password")
        a = self.get(urllib.parse.urljoin(page.url, f.action), data)
        out = self.follow(a, callback_prefix)
        assert isinstance(out, str), (out.status, out.text[:500])
        return out
