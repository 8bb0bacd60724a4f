"""A URL a chat's tool may fetch is checked on every hop (issue 35, door 2).

The red-team probe: ``image_generate``'s OpenAI provider on Hermes 0.19 downloads an edit source
with ``requests.get``, which follows redirects with no check per hop, so a public https address
answering ``302 → http://127.0.0.1:…`` had a loopback service's body uploaded to the image
provider. 0.22's provider downloads through ``url_safety.create_ssrf_safe_client``, which checks
every connection. The guard now lets an https source through only where Hermes has that client
(``features.redirects_checked``, by capability); elsewhere a chat's source must be a ``data:`` image.

Why this test is faithful with the network closed: the first hop is ``https://93.184.216.34/…``, a
literal public address, so the guard judges it with Hermes' own ``is_safe_url`` exactly as in
production (no DNS involved). The route to that address is an HTTPS proxy on loopback
(``HTTPS_PROXY``, honoured by ``requests`` and ``httpx`` alike, as on a machine behind a company
proxy), which answers as that host — with a certificate for it from a test CA the clients are told
to trust (``REQUESTS_CA_BUNDLE``, ``SSL_CERT_FILE``) — ``302`` to a real loopback service. The
redirect hop is a direct connection, as in the attack. The image provider is a local
OpenAI-compatible server (``OPENAI_BASE_URL``) that records what Hermes uploads to it; the
provider code, the download and the tool are Hermes' own, dispatched through Hermes.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import socket
import socketserver
import ssl
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hermes_side.stores import bindings
from tests.hermes.loopback import Served
from tests.hermes.loopback import service as loopback_service
from tests.hermes.world import PLUGIN, call_tool_raw

G111 = "hermes-onebotv11+group+111"
PUBLIC = "93.184.216.34"
SECRET = b"\x89PNG\r\n\x1a\n" + b"other-chats-upload-on-loopback"
PNG_1PX = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
                           "AAAABJRU5ErkJggg==")


def _certificates(folder):
    """A test CA and a certificate for the public address, signed by it."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "recall test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(1).not_valid_before(now - datetime.timedelta(days=1))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, PUBLIC)]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(2)
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(PUBLIC))]),
                           critical=False)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    (folder / "ca.pem").write_bytes(ca.public_bytes(pem))
    (folder / "leaf.pem").write_bytes(leaf.public_bytes(pem))
    (folder / "leaf.key").write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                                        serialization.NoEncryption()))
    return folder / "ca.pem"


def _image_provider(uploads):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            uploads.append(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            body = json.dumps({"created": 1, "data": [{"b64_json": base64.b64encode(PNG_1PX).decode()}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    return Served(ThreadingHTTPServer(("127.0.0.1", 0), Handler))


def _redirecting_proxy(folder, location, first_hops):
    """An HTTPS proxy that answers every CONNECT as the host itself: ``302 Location: <location>``."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(folder / "leaf.pem", folder / "leaf.key")

    class Handler(socketserver.BaseRequestHandler):
        def handle(self):
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = self.request.recv(1)
                if not chunk:
                    return
                head += chunk
            first_hops.append(head.split(b"\r\n", 1)[0].decode().rsplit(" ", 1)[0])  # "CONNECT host:port"
            self.request.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            with context.wrap_socket(self.request, server_side=True) as tls:
                request = b""
                while b"\r\n\r\n" not in request:
                    chunk = tls.recv(4096)
                    if not chunk:
                        return
                    request += chunk
                tls.sendall(f"HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\n"
                            "Connection: close\r\n\r\n".encode())

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True
        address_family = socket.AF_INET

    return Served(Server(("127.0.0.1", 0), Handler))


@pytest.fixture
def redirect_to_loopback(world, loaded_plugin, tmp_path, monkeypatch):
    hits, uploads, first_hops = [], [], []
    ca = _certificates(tmp_path)
    service, provider = loopback_service(SECRET, hits), _image_provider(uploads)
    proxy = _redirecting_proxy(tmp_path, f"http://127.0.0.1:{service.port}/other-chat.png", first_hops)
    for name in ("HTTPS_PROXY", "https_proxy"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{proxy.port}")
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(ca))
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{provider.port}/v1")
    (world.home / "config.yaml").write_text(json.dumps({"plugins": {"enabled": [PLUGIN]},
                                                        "image_gen": {"provider": "openai"}}))
    bindings.set_binding(world.home, "onebotv11:111", world.project("Alpha", world.folder("alpha")))
    world.session("hello", source="api_server", sid=G111)
    world.cli = world.session("operator", cwd=world.folder("alpha"))
    yield world, hits, uploads, first_hops
    for served in (proxy, provider, service):
        served.close()


def operator_downloads_through_the_redirect(w, hits, uploads, first_hops) -> bool:
    """The same call from the operator's CLI session (the guard lets the operator do anything):
    whether this Hermes' own download followed the redirect to loopback and uploaded the body. Either
    it did, or Hermes itself refused the loopback hop — the setup reaches the redirect either way."""
    raw = call_tool_raw("image_generate", {"prompt": "make it blue", "image_url": f"https://{PUBLIC}/cat.png"}, w.cli)
    assert first_hops == [f"CONNECT {PUBLIC}:443"]
    leaked = any(SECRET in body for body in uploads)
    assert leaked or ("Blocked" in raw and hits == []), raw
    hits.clear(), uploads.clear(), first_hops.clear()
    return leaked


@pytest.mark.parametrize("field", ["image_url", "reference_image_urls"])
def test_a_public_address_that_redirects_to_loopback_uploads_nothing_from_a_chat(redirect_to_loopback, field):
    w, hits, uploads, first_hops = redirect_to_loopback
    unchecked = operator_downloads_through_the_redirect(w, hits, uploads, first_hops)
    source = f"https://{PUBLIC}/cat.png"
    args = {"prompt": "make it blue", field: source if field == "image_url" else [source]}

    raw = call_tool_raw("image_generate", args, G111)

    assert not any(SECRET in body for body in uploads), "the loopback body reached the image provider"
    assert hits == [] and "other-chats-upload" not in raw
    if unchecked:  # the guard refuses: this Hermes follows the redirect unchecked
        assert first_hops == [] and f"{field} must be a data: image" in json.loads(raw)["error"]
    else:  # the guard lets a public address through; Hermes' own download refuses the loopback hop
        assert first_hops == [f"CONNECT {PUBLIC}:443"]
