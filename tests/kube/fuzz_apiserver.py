#!/usr/bin/env python3
"""Robustness check of the test API server: random writes (malformed shapes, wrong types, bad
JSON, every patch type) on a few resources must each get a 2xx or 4xx answer, never a 5xx, and
the server must print no traceback. Usage: fuzz_apiserver.py APISERVER_PY [REQUESTS] [SEED]."""

import http.client
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import urllib.parse

SCALARS = [None, 1, "x", True, 1.5, [], {}, [1], ["a"], {"a": None}, {"name": 5},
           [{"name": "a"}, {"name": "a"}], [{"x": 1}]]
KEYS = ["spec", "metadata", "data", "containers", "ports", "env", "labels", "name", "status",
        "selector", "finalizers", "template", "annotations", "versions", "names"]
PATHS = {
    "/api/v1/namespaces/default/configmaps/c": ("v1", "ConfigMap"),
    "/apis/apps/v1/namespaces/default/deployments/d": ("apps/v1", "Deployment"),
    "/apis/apps/v1/namespaces/default/deployments/d/status": ("apps/v1", "Deployment"),
    "/api/v1/namespaces/default/services/s": ("v1", "Service"),
    "/api/v1/namespaces/n": ("v1", "Namespace"),
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/xs.example.com":
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
}
PARAMS = {
    "limit": ["1", "0", "-1", "x", ""],
    "continue": ["", "x", "eyJhZnRlciI6IDF9", "e30="],
    "labelSelector": ["a=b", "a in (b,c)", "!a", "a notin ()", "==", "a,,b", "(", "a!=b,c"],
    "fieldSelector": ["metadata.name=c", "spec.x=y", "=", "metadata.namespace!=x", "a"],
    "resourceVersion": ["", "0", "1", "x", "999999"],
    "watch": ["true", "1", "false"],
    "timeoutSeconds": ["0", "x", "-5"],
    "dryRun": ["All", "x"],
    "propagationPolicy": ["Foreground", "x"],
    "fieldValidation": ["Strict", "x"],
}
TYPES = ["application/apply-patch+yaml", "application/merge-patch+json",
         "application/strategic-merge-patch+json", "application/json-patch+json",
         "application/json"]


def value(rng, depth=0):
    if depth > 3 or rng.random() < 0.4:
        return rng.choice(SCALARS)
    if rng.random() < 0.5:
        return {rng.choice(KEYS): value(rng, depth + 1) for _ in range(rng.randint(1, 3))}
    return [value(rng, depth + 1) for _ in range(rng.randint(0, 3))]


def main():
    server, count = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    with tempfile.TemporaryDirectory() as d:
        port_file = os.path.join(d, "port")
        log = open(os.path.join(d, "log"), "w+")
        proc = subprocess.Popen([sys.executable, server, "--port-file", port_file],
                                stdout=log, stderr=log)
        try:
            for _ in range(400):
                if os.path.exists(port_file):
                    break
                time.sleep(0.05)
            conn = http.client.HTTPConnection("127.0.0.1", int(open(port_file).read()))
            failures = 0
            for i in range(count):
                path = rng.choice(sorted(PATHS))
                method = rng.choice(["PATCH", "PUT", "POST", "GET", "DELETE"])
                body = value(rng)
                if isinstance(body, dict) and rng.random() < 0.7:
                    api_version, kind = PATHS[path]
                    body.setdefault("apiVersion", api_version)
                    body.setdefault("kind", kind)
                    if isinstance(body.get("metadata"), dict):
                        body["metadata"]["name"] = path.split("/")[-1 if "status" not in path
                                                                    else -2]
                if method == "POST":
                    path = path.rsplit("/", 1)[0]
                query = "?fieldManager=fuzz&force=true" if rng.random() < 0.8 else ""
                if method == "GET" and rng.random() < 0.7:
                    # A list or watch with odd parameters.
                    path = path.rsplit("/", 1)[0] if "status" not in path else path
                    params = {k: rng.choice(PARAMS[k]) for k in rng.sample(sorted(PARAMS), 3)}
                    if params.get("watch") in ("true", "1"):
                        params["timeoutSeconds"] = "0"
                    query = "?" + urllib.parse.urlencode(params)
                data = json.dumps(body) if rng.random() < 0.95 else "{not json"
                conn.request(method, path + query, data, {"Content-Type": rng.choice(TYPES)})
                reply = conn.getresponse()
                text = reply.read()
                if reply.status >= 500:
                    failures += 1
                    print("%s %s %s -> %d %s" % (method, path, data[:300], reply.status,
                                                 text[:300]))
        finally:
            proc.terminate()
            proc.wait(10)
        log.seek(0)
        out = log.read()
        if "Traceback" in out:
            print(out[-4000:])
            failures += 1
        print("%d requests, %d failures" % (count, failures))
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
