"""A stand-in Kubernetes API server for the node endpoints gpuvet-k8s-check calls, over
HTTPS on 127.0.0.1 with a certificate the test makes (openssl):

    GET   /api/v1/nodes/NAME
    PATCH /api/v1/nodes/NAME   (Content-Type: application/merge-patch+json)

As the real one: a bearer token is required (401 otherwise), an unknown node is 404 with a
Status object, a merge patch (RFC 7386) that carries metadata.resourceVersion is refused
with 409 Conflict when the node has changed since, and every write bumps the
resourceVersion. before_patch, when set, runs once before the next PATCH is applied: a
concurrent writer (the test adds a taint there to force a conflict). Every request is kept
in requests as (method, path, content type, parsed body)."""
import copy
import http.server
import json
import ssl
import threading


def merge_patch(target, patch):
    """RFC 7386: objects merge key by key, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def status(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}


class FakeKubeAPI:
    def __init__(self, certfile, keyfile, token):
        self.token = token
        self.nodes = {}
        self.requests = []
        self.before_patch = None
        self.lock = threading.Lock()
        api = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, code, body):
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def handle_node(self, method):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                ctype = self.headers.get("Content-Type", "")
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw
                with api.lock:
                    api.requests.append((method, self.path, ctype, body))
                    if self.headers.get("Authorization") != "Bearer " + api.token:
                        return self.reply(401, status(401, "Unauthorized", "Unauthorized"))
                    prefix = "/api/v1/nodes/"
                    name = self.path[len(prefix):] if self.path.startswith(prefix) else None
                    if not name or name not in api.nodes:
                        return self.reply(404, status(404, "NotFound", 'nodes "%s" not found' % name))
                    if method == "GET":
                        return self.reply(200, api.nodes[name])
                    if ctype != "application/merge-patch+json":
                        return self.reply(415, status(415, "UnsupportedMediaType", "unsupported: " + ctype))
                    if not isinstance(body, dict):
                        return self.reply(400, status(400, "BadRequest", "the patch is not a JSON object"))
                    if api.before_patch:
                        concurrent, api.before_patch = api.before_patch, None
                        concurrent(api.nodes[name])
                        api.bump(name)
                    node = api.nodes[name]
                    wanted = body.get("metadata", {}).get("resourceVersion")
                    if wanted is not None and wanted != node["metadata"]["resourceVersion"]:
                        return self.reply(409, status(409, "Conflict", 'Operation cannot be fulfilled on nodes "%s": '
                                                      "the object has been modified" % name))
                    api.nodes[name] = merge_patch(node, body)
                    api.bump(name)
                    return self.reply(200, api.nodes[name])

            def do_GET(self):
                self.handle_node("GET")

            def do_PATCH(self):
                self.handle_node("PATCH")

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certfile, keyfile)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def bump(self, name):
        meta = self.nodes[name]["metadata"]
        meta["resourceVersion"] = str(int(meta["resourceVersion"]) + 1)

    def add_node(self, name, labels=None, taints=None):
        node = {"kind": "Node", "apiVersion": "v1",
                "metadata": {"name": name, "resourceVersion": "100", "labels": dict(labels or {}),
                             "annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
                "spec": {"podCIDR": "10.244.1.0/24"}}
        if taints is not None:
            node["spec"]["taints"] = list(taints)
        with self.lock:
            self.nodes[name] = node
            self.requests = []

    def node(self, name):
        with self.lock:
            return copy.deepcopy(self.nodes[name])

    def close(self):
        if self.thread.is_alive():
            self.server.shutdown()
            self.server.server_close()
