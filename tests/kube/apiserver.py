#!/usr/bin/env python3
"""A small Kubernetes API server for kpkg's tests and benches (Python standard library only).

It speaks enough of the real protocol that kubectl 1.32 drives it: discovery (aggregated v2 and
legacy), OpenAPI v3 documents that advertise server-side field validation, server-side apply with
managed fields and conflicts, create/update/patch, get/list/watch/delete, Status errors, and
simulated controllers that make Deployments, CRDs, Jobs, CSVs ... become ready after a delay.

Usage:
  python3 apiserver.py --port-file F [--port 0] [--tls-cert C --tls-key K [--client-ca CA]]
                       [--token T]... [--basic USER:PASS] [--legacy-discovery] [--olm]
                       [--delay-ms N] [--control-port-file F2]

  --port-file F        once listening, the port is written to F (through a temp file + rename)
  --port N             the port on 127.0.0.1 (0, the default: a free one)
  --tls-cert/--tls-key serve HTTPS with this certificate and key (PEM)
  --client-ca CA       accept client certificates signed by CA (a request with one is authenticated)
  --token T            accept "Authorization: Bearer T" (repeatable)
  --basic USER:PASS    accept HTTP basic authentication with these credentials
  --legacy-discovery   never answer the aggregated discovery format (as a server before 1.26)
  --olm                also serve the operators.coreos.com types, as if OLM were installed, and
                       play OLM roughly: a Subscription gets an InstallPlan (to approve by
                       setting spec.approved when its installPlanApproval is Manual), then its
                       CSV, which goes Pending -> Succeeded; CatalogSources become READY
  --delay-ms N         how long the simulated controllers take to make an object ready (100)
  --control-port-file F  also serve the control API (only) over plain HTTP on another free port,
                       written to F (for test drivers that speak no TLS)

Without --token, --basic and --client-ca every request is accepted (anonymous); with any of them
a request that presents none of the accepted credentials gets a 401 Status. SIGTERM stops it.
It starts with the namespaces default, kube-system, kube-public and kube-node-lease (and, with
--olm, olm and operators, as an upstream OLM installation has them).

Request bodies must be JSON: kubectl and kpkg send JSON for apply, patch and objects read from
files; apply-patch YAML that is not JSON gets 400 BadRequest, and a protobuf body (what kubectl's
generators such as `kubectl create configmap` send) 415 UnsupportedMediaType.

The control API (for tests, not in discovery, never faulted nor authenticated), all JSON:
  POST /__test/config     {"delay_ms": N,
                           "behaviours": [{"kind": "Deployment", "name": "x", "namespace": "ns",
                                           "mode": "ready" | "never" | "fail", "delay_ms": N,
                                           "delete_delay_ms": N, "status": {...}}],
                           "faults": [{"method": "PATCH", "path": "regex", "query": "regex",
                                       "count": 1, "watch_end_ms": N, "watch_expired": true,
                                       "status": 500, "reason": "InternalError",
                                       "retry_after": 1, "drop": true, "delay_ms": N,
                                       "hang": true, "exit": true,
                                       "forbidden": true, "message": "..."}]}
                          behaviours and faults are appended to those set before (a later
                          behaviour wins); name/namespace/method are optional (any); count -1 =
                          forever; a fault with only delay_ms slows the reply down, then serves it.
                          hang: the request is never answered (the connection is held open until
                          the client closes it); exit: the whole server ends at once, as if
                          killed, answering nothing (later connections are refused).
                          query: a regex the raw query string must match too ("watch=" picks
                          watches). For a watch: watch_end_ms ends the stream after that long,
                          watch_expired answers one ERROR event (410 Expired) and ends it.
                          mode "never": a CRD never Established, a Deployment never available,
                          a Job never done, a CSV Pending...; "fail": a Deployment with
                          ProgressDeadlineExceeded, a Job Failed, a CSV Failed. delay_ms: how
                          long the controller takes; delete_delay_ms: how long a DELETE takes
                          (the object is marked with a deletionTimestamp until then; by default
                          namespaces take delay_ms, other objects go at once). An object with
                          metadata.finalizers stays, marked, until an update removes them.
                          status: what the controller sets as the object's status after the
                          delay, for any kind (custom resources too); "$generation" in it stands
                          for the object's metadata.generation.
  POST /__test/status     {"apiVersion", "kind", "namespace", "name", "status": {...}}: sets an
                          object's status now (a MODIFIED event; the controller leaves it be
                          until its spec changes)
  POST /__test/reset      back to the initial state: objects, configuration and request log
  GET  /__test/requests   {"items": [{"method","path","query","content_type","status",
                                      "user_agent"}]}: every request except /__test ones, in
                          order, each logged before its reply goes out (a watch when its stream
                          starts); status 0 = the connection was dropped without an answer
  POST /__test/requests/clear   empties the request log
  GET  /__test/objects    {"items": [every stored object]}
"""

import argparse
import base64
import datetime
import hashlib
import http.client
import json
import os
import re
import select
import signal
import socket
import ssl
import sys
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socketserver import TCPServer

VERSION = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.2",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2025-02-12T21:19:25Z",
    "goVersion": "go1.23.6",
    "compiler": "gc",
    "platform": "linux/amd64",
}

AGGREGATED_CT = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


def jcopy(v):
    """A deep copy of a JSON value (several times faster than copy.deepcopy)."""
    if isinstance(v, dict):
        return {k: jcopy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [jcopy(x) for x in v]
    return v


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---------------------------------------------------------------------------------------------
# Resource types


class RType:
    """One resource type: where it is served and how it behaves."""

    def __init__(self, group, versions, kind, plural, singular=None, namespaced=True,
                 short=(), status=False, categories=(), generation=True, crd=None):
        self.group = group
        self.versions = list(versions)  # served versions; the first is the preferred one
        self.kind = kind
        self.plural = plural
        self.singular = singular or kind.lower()
        self.namespaced = namespaced
        self.short = list(short)
        self.status = status  # has a /status subresource
        self.categories = list(categories)
        self.generation = generation  # metadata.generation is maintained
        self.crd = crd  # the name of the CRD that defines it, for custom resources

    def group_resource(self):
        """The "deployments.apps" form used in messages."""
        return self.plural + ("." + self.group if self.group else "")

    def api_version(self, version=None):
        v = version or self.versions[0]
        return v if self.group == "" else self.group + "/" + v


def builtin_types(olm):
    t = [
        RType("", ["v1"], "Namespace", "namespaces", namespaced=False, short=["ns"], status=True,
              generation=False),
        RType("", ["v1"], "ConfigMap", "configmaps", short=["cm"], generation=False),
        RType("", ["v1"], "Secret", "secrets", generation=False),
        RType("", ["v1"], "ServiceAccount", "serviceaccounts", short=["sa"], generation=False),
        RType("", ["v1"], "Service", "services", short=["svc"], status=True, categories=["all"],
              generation=False),
        RType("", ["v1"], "Pod", "pods", short=["po"], status=True, categories=["all"],
              generation=False),
        RType("apps", ["v1"], "Deployment", "deployments", short=["deploy"], status=True,
              categories=["all"]),
        RType("apps", ["v1"], "StatefulSet", "statefulsets", short=["sts"], status=True,
              categories=["all"]),
        RType("apps", ["v1"], "DaemonSet", "daemonsets", short=["ds"], status=True,
              categories=["all"]),
        RType("batch", ["v1"], "Job", "jobs", status=True, categories=["all"]),
        RType("batch", ["v1"], "CronJob", "cronjobs", short=["cj"], status=True,
              categories=["all"]),
        RType("policy", ["v1"], "PodDisruptionBudget", "poddisruptionbudgets", short=["pdb"],
              status=True),
        RType("networking.k8s.io", ["v1"], "NetworkPolicy", "networkpolicies",
              short=["netpol"]),
        RType("networking.k8s.io", ["v1"], "Ingress", "ingresses", short=["ing"], status=True),
        RType("scheduling.k8s.io", ["v1"], "PriorityClass", "priorityclasses",
              namespaced=False, short=["pc"]),
        RType("rbac.authorization.k8s.io", ["v1"], "Role", "roles", generation=False),
        RType("rbac.authorization.k8s.io", ["v1"], "RoleBinding", "rolebindings",
              generation=False),
        RType("rbac.authorization.k8s.io", ["v1"], "ClusterRole", "clusterroles",
              namespaced=False, generation=False),
        RType("rbac.authorization.k8s.io", ["v1"], "ClusterRoleBinding", "clusterrolebindings",
              namespaced=False, generation=False),
        RType("apiextensions.k8s.io", ["v1"], "CustomResourceDefinition",
              "customresourcedefinitions", namespaced=False, short=["crd", "crds"], status=True),
        RType("admissionregistration.k8s.io", ["v1"], "ValidatingWebhookConfiguration",
              "validatingwebhookconfigurations", namespaced=False),
        RType("admissionregistration.k8s.io", ["v1"], "MutatingWebhookConfiguration",
              "mutatingwebhookconfigurations", namespaced=False),
        RType("apiregistration.k8s.io", ["v1"], "APIService", "apiservices", namespaced=False,
              status=True),
    ]
    if olm:
        g = "operators.coreos.com"
        t += [
            RType(g, ["v1alpha1"], "ClusterServiceVersion", "clusterserviceversions",
                  short=["csv", "csvs"], status=True, categories=["olm"]),
            RType(g, ["v1alpha1"], "Subscription", "subscriptions", short=["sub", "subs"],
                  status=True, categories=["olm"]),
            RType(g, ["v1alpha1"], "InstallPlan", "installplans", short=["ip"], status=True,
                  categories=["olm"]),
            RType(g, ["v1alpha1"], "CatalogSource", "catalogsources", short=["catsrc"],
                  status=True, categories=["olm"]),
            RType(g, ["v1"], "OperatorGroup", "operatorgroups", short=["og"], status=True,
                  categories=["olm"]),
        ]
    return t


# ---------------------------------------------------------------------------------------------
# Errors


class ApiError(Exception):
    """A request refused with a Status object."""

    def __init__(self, code, reason, message, details=None, headers=None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}

    def status(self):
        s = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
             "message": self.message, "reason": self.reason, "code": self.code}
        if self.details is not None:
            s["details"] = self.details
        return s


def not_found(rt, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (rt.group_resource(), name),
                    {"name": name, "group": rt.group, "kind": rt.plural})


def ns_not_found(ns):
    return ApiError(404, "NotFound", 'namespaces "%s" not found' % ns,
                    {"name": ns, "kind": "namespaces"})


def bad_request(msg):
    return ApiError(400, "BadRequest", msg)


def invalid(rt, name, causes):
    """422 Invalid; causes = [(field, message)]."""
    kind = rt.kind + ("." + rt.group if rt.group else "")
    text = "; ".join("%s: %s" % (f, m) for f, m in causes)
    return ApiError(422, "Invalid", '%s "%s" is invalid: %s' % (kind, name, text),
                    {"name": name, "group": rt.group, "kind": rt.kind,
                     "causes": [{"reason": "FieldValueInvalid", "message": m, "field": f}
                                for f, m in causes]})


def unknown_resource():
    return ApiError(404, "NotFound", "the server could not find the requested resource",
                    {})


# ---------------------------------------------------------------------------------------------
# Field sets (server-side apply's fieldsV1), as sets of path tuples. A path element is a
# fieldsV1 key: "f:<field>", "k:<json of the key fields>" for an item of a list keyed by
# fields, or "v:<json>" for a set item. Lists that are not keyed are atomic (one leaf).

# Lists merged by key, by field name; the key fields an item must have.
KEYED_LISTS = {
    "containers": ["name"],
    "initContainers": ["name"],
    "ephemeralContainers": ["name"],
    "env": ["name"],
    "volumes": ["name"],
    "volumeMounts": ["mountPath"],
    "imagePullSecrets": ["name"],
    "ports": None,  # containerPort+protocol in pods, port+protocol in services
    "ownerReferences": ["uid"],
    "conditions": ["type"],
    "webhooks": ["name"],
}
# Lists whose items are scalars merged as a set.
SET_LISTS = {"finalizers"}
# Maps replaced as a whole (atomic), by field name.
ATOMIC_MAPS = {"selector", "matchLabels"}

MISSING = object()


def list_keys(field, items):
    """The key fields of a keyed list, or None when the list is atomic."""
    if field not in KEYED_LISTS or not items:
        return None if field not in KEYED_LISTS else []
    keys = KEYED_LISTS[field]
    if keys is None:
        pod = isinstance(items[0], dict) and "containerPort" in items[0]
        keys = ["containerPort", "protocol"] if pod else ["port", "protocol"]
    for it in items:
        if not isinstance(it, dict) or keys[0] not in it:
            return None
    return keys


def key_field(item, k):
    """An item's key field; a port's protocol defaults to TCP, as the server would default it."""
    if k == "protocol":
        return item.get(k, "TCP")
    return item.get(k, MISSING)


def item_key(keys, item):
    vals = {k: key_field(item, k) for k in keys}
    return "k:" + json.dumps({k: v for k, v in vals.items() if v is not MISSING}, sort_keys=True,
                             separators=(",", ":"))


def item_matches(item, want):
    return isinstance(item, dict) and all(key_field(item, k) == v for k, v in want.items())


def fields_of(value, path=(), field=None, out=None, top=True):
    """The field set of a value: its leaves and its list items (as kubectl's SSA shows them)."""
    if out is None:
        out = set()
    if isinstance(value, dict) and value and not (field in ATOMIC_MAPS and not top):
        for k, v in value.items():
            fields_of(v, path + ("f:" + k,), k, out, False)
    elif isinstance(value, list) and value and field in SET_LISTS:
        for v in value:
            out.add(path + ("v:" + json.dumps(v, separators=(",", ":")),))
    elif isinstance(value, list) and value and list_keys(field, value):
        keys = list_keys(field, value)
        for it in value:
            p = path + (item_key(keys, it),)
            out.add(p)
            for k, v in it.items():
                fields_of(v, p + ("f:" + k,), k, out, False)
    elif path:
        out.add(path)
    return out


def object_fields(obj, part):
    """The fields a write of `obj` manages: part "main" (everything but status when the type has
    a status subresource), "status" (status only) or "all"."""
    view = {}
    for k, v in obj.items():
        if k in ("apiVersion", "kind"):
            continue
        if k == "metadata":
            md = {m: v[m] for m in ("labels", "annotations", "finalizers", "ownerReferences")
                  if m in v and v[m]}
            if md and part != "status":
                view["metadata"] = md
            continue
        if part == "main" and k == "status":
            continue
        if part == "status" and k != "status":
            continue
        view[k] = v
    return fields_of(view)


def get_at(obj, path):
    cur = obj
    for el in path:
        kind, key = el[:1], el[2:]
        if kind == "f":
            if not isinstance(cur, dict) or key not in cur:
                return MISSING
            cur = cur[key]
        elif kind == "k":
            want = json.loads(key)
            if not isinstance(cur, list):
                return MISSING
            found = MISSING
            for it in cur:
                if item_matches(it, want):
                    found = it
                    break
            if found is MISSING:
                return MISSING
            cur = found
        elif kind == "v":
            want = json.loads(key)
            if not isinstance(cur, list) or want not in cur:
                return MISSING
            cur = want
        else:
            return MISSING
    return cur


def remove_at(obj, path):
    """Removes the field or item at path (no-op when absent)."""
    parent = get_at(obj, path[:-1])
    if parent is MISSING:
        return
    el = path[-1]
    kind, key = el[:1], el[2:]
    if kind == "f" and isinstance(parent, dict):
        parent.pop(key, None)
    elif kind == "k" and isinstance(parent, list):
        want = json.loads(key)
        parent[:] = [it for it in parent if not item_matches(it, want)]
    elif kind == "v" and isinstance(parent, list):
        want = json.loads(key)
        parent[:] = [it for it in parent if it != want]


def merge(live, applied, field=None):
    """The applied configuration merged into the live value."""
    if isinstance(live, dict) and isinstance(applied, dict) and field not in ATOMIC_MAPS:
        out = dict(live)
        for k, v in applied.items():
            out[k] = merge(live.get(k, MISSING), v, k)
        return out
    if isinstance(live, list) and isinstance(applied, list):
        if field in SET_LISTS:
            return list(live) + [v for v in applied if v not in live]
        keys = list_keys(field, applied) if applied else None
        if keys and list_keys(field, live) == keys:
            out = list(live)
            for it in applied:
                k = item_key(keys, it)
                for i, cur in enumerate(out):
                    if item_key(keys, cur) == k:
                        out[i] = merge(cur, it)
                        break
                else:
                    out.append(it)
            return out
    return jcopy(applied)


def to_fieldsv1(paths):
    """A set of paths as a fieldsV1 tree; a member that also has members below it is marked
    with "." (as list items always are)."""
    tree = {}
    for p in sorted(paths):
        node = tree
        for el in p:
            node = node.setdefault(el, {})
    for p in paths:
        node = tree
        for el in p:
            node = node[el]
        if node:
            node["."] = {}
    return tree


def from_fieldsv1(tree, path=(), out=None):
    if out is None:
        out = set()
    if not tree and path:
        out.add(path)
    for k, v in tree.items():
        if k == ".":
            out.add(path)
        else:
            from_fieldsv1(v, path + (k,), out)
    return out


def path_text(path):
    """A field path as the Conflict message prints it: .spec.replicas, .spec.containers[name="x"]."""
    s = ""
    for el in path:
        kind, key = el[:1], el[2:]
        if kind == "f":
            s += "." + key
        elif kind == "k":
            s += "[" + ",".join("%s=%s" % (k, json.dumps(v)) for k, v in json.loads(key).items()) + "]"
        else:
            s += "[" + key + "]"
    return s


# ---------------------------------------------------------------------------------------------
# Label and field selectors


def split_terms(sel):
    terms, depth, cur = [], 0, ""
    for ch in sel:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            terms.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        terms.append(cur.strip())
    return terms


def parse_label_selector(sel):
    """A list of predicates over a labels dict; raises ApiError on a bad selector."""
    preds = []
    for t in split_terms(sel or ""):
        m = re.fullmatch(r"([^\s!=()]+)\s+(in|notin)\s+\((.*)\)", t)
        if m:
            key, op = m.group(1), m.group(2)
            vals = {v.strip() for v in m.group(3).split(",") if v.strip()}
            if op == "in":
                preds.append(lambda l, k=key, vs=vals: l.get(k) in vs)
            else:
                preds.append(lambda l, k=key, vs=vals: l.get(k) not in vs)
            continue
        m = re.fullmatch(r"([^\s!=()]+)\s*(==|=|!=)\s*([^\s!=()]*)", t)
        if m:
            key, op, val = m.groups()
            if op == "!=":
                preds.append(lambda l, k=key, v=val: l.get(k) != v)
            else:
                preds.append(lambda l, k=key, v=val: l.get(k) == v)
            continue
        m = re.fullmatch(r"!\s*([^\s!=()]+)", t)
        if m:
            preds.append(lambda l, k=m.group(1): k not in l)
            continue
        m = re.fullmatch(r"([^\s!=()]+)", t)
        if m:
            preds.append(lambda l, k=m.group(1): k in l)
            continue
        raise bad_request("unable to parse requirement: invalid label selector %r" % sel)
    return preds


def parse_field_selector(sel):
    preds = []
    for t in split_terms(sel or ""):
        m = re.fullmatch(r"([^\s!=]+)\s*(==|=|!=)\s*(.*)", t)
        if not m:
            raise bad_request('invalid field selector: "%s"' % t)
        key, op, val = m.groups()
        if key == "metadata.name":
            get = lambda o: o["metadata"].get("name", "")
        elif key == "metadata.namespace":
            get = lambda o: o["metadata"].get("namespace", "")
        elif key == "status.phase":
            get = lambda o: (o.get("status") or {}).get("phase", "")
        else:
            raise bad_request('"%s" is not a known field selector: only "metadata.name", '
                              '"metadata.namespace"' % key)
        if op == "!=":
            preds.append(lambda o, g=get, v=val: g(o) != v)
        else:
            preds.append(lambda o, g=get, v=val: g(o) == v)
    return preds


def selected(obj, lpreds, fpreds):
    labels = obj["metadata"].get("labels") or {}
    return all(p(labels) for p in lpreds) and all(p(obj) for p in fpreds)


# ---------------------------------------------------------------------------------------------
# The store: objects, the resource version counter, the watch history, the controllers


class Store:
    def __init__(self, olm, delay_ms):
        self.olm = olm
        self.default_delay = delay_ms
        self.lock = threading.RLock()
        self.cond = threading.Condition(self.lock)
        self.reset()

    def reset(self):
        with self.lock:
            self.epoch = getattr(self, "epoch", 0) + 1  # watches end when it changes
            self.types = builtin_types(self.olm)
            self.objects = {}  # (group, plural, ns, name) -> object
            self.rv = 100
            self.history = []  # (rv, type, group, plural, ns, object)
            self.floor = self.rv  # watches from before this resourceVersion are expired
            self.changed = {}  # key -> time the object's spec last changed (for controllers)
            self.pending = set()  # keys the simulated controllers still have to look at
            self.deleting = {}  # key -> time a delayed delete (namespaces, ...) finishes
            self.delay_ms = self.default_delay
            self.behaviours = []
            self.faults = []
            self.requests = []
            initial = ["default", "kube-system", "kube-public", "kube-node-lease"]
            if self.olm:
                initial += ["olm", "operators"]  # where an upstream OLM install puts itself
            for ns in initial:
                self.write_new(self.find_kind("", "Namespace"), "",
                               {"apiVersion": "v1", "kind": "Namespace",
                                "metadata": {"name": ns}}, None, "Update", "main")
            self.cond.notify_all()

    # -- types --

    def find_type(self, group, version, plural):
        for t in self.types:
            if t.group == group and t.plural == plural and version in t.versions:
                return t
        return None

    def find_kind(self, group, kind):
        for t in self.types:
            if t.group == group and t.kind == kind:
                return t
        return None

    def groups(self):
        """[(group, [versions])] in discovery order: core first, then as registered."""
        order = []
        for t in self.types:
            g = next((x for x in order if x[0] == t.group), None)
            if g is None:
                order.append((t.group, []))
                g = order[-1]
            for v in t.versions:
                if v not in g[1]:
                    g[1].append(v)
        return order

    # -- writes --

    def next_rv(self):
        self.rv += 1
        return str(self.rv)

    def emit(self, etype, rt, ns, obj, prev=None):
        # prev: the object before a MODIFIED event (stored objects are never changed in place),
        # so that a watch with a selector sees objects enter and leave it.
        self.history.append((self.rv, etype, rt.group, rt.plural, ns, obj, prev))
        if len(self.history) > 200000:
            del self.history[:50000]
            self.floor = self.history[0][0] - 1
        self.cond.notify_all()

    def key(self, rt, ns, name):
        return (rt.group, rt.plural, ns if rt.namespaced else "", name)

    def write_new(self, rt, ns, obj, manager, operation, part, dry_run=False):
        """Stores a new object (after defaulting); returns it."""
        md = obj.setdefault("metadata", {})
        if rt.namespaced:
            md["namespace"] = ns
        else:
            md.pop("namespace", None)
        md["uid"] = str(uuid.uuid4())
        md["creationTimestamp"] = now_rfc3339()
        if rt.generation:
            md["generation"] = 1
        else:
            md.pop("generation", None)
        md.pop("deletionTimestamp", None)
        md.pop("resourceVersion", None)
        apply_defaults(rt, obj)
        if rt.status and part == "main" and rt.kind != "Namespace":
            obj.pop("status", None)
        md["managedFields"] = []
        if manager:
            fs = object_fields(obj, part)
            if operation == "Apply":
                fs = obj.pop("__applied_fields")
            set_manager(obj, manager, operation, rt, part, fs)
        obj.pop("__applied_fields", None)
        if dry_run:
            return obj  # as a real server: no resourceVersion on what was not stored
        md["resourceVersion"] = self.next_rv()
        k = self.key(rt, ns, md["name"])
        self.objects[k] = obj
        self.changed[k] = time.time()
        self.pending.add(k)
        self.emit("ADDED", rt, md.get("namespace", ""), obj)
        return obj

    def replace(self, rt, old, new, dry_run=False):
        """Stores `new` in place of `old` when anything changed (rv, generation bumped)."""
        md = new["metadata"]
        for f in ("uid", "creationTimestamp", "namespace", "name", "deletionTimestamp"):
            if f in old["metadata"]:
                md[f] = old["metadata"][f]
        if rt.generation:
            md["generation"] = old["metadata"].get("generation", 1)
            if spec_of(old) != spec_of(new):
                md["generation"] += 1
        md["resourceVersion"] = old["metadata"]["resourceVersion"]
        if same_content(old, new):
            return old
        if dry_run:
            return new
        md["resourceVersion"] = self.next_rv()
        k = self.key(rt, md.get("namespace", ""), md["name"])
        self.objects[k] = new
        if md.get("generation") != old["metadata"].get("generation"):
            self.changed[k] = time.time()
            self.pending.add(k)
        self.emit("MODIFIED", rt, md.get("namespace", ""), new, old)
        if md.get("deletionTimestamp") and not md.get("finalizers") and \
                k not in self.deleting:
            # The last finalizer went: the object goes.
            self.delete(rt, new)
        return new

    def delete(self, rt, obj):
        md = obj["metadata"]
        k = self.key(rt, md.get("namespace", ""), md["name"])
        self.objects.pop(k, None)
        self.changed.pop(k, None)
        self.pending.discard(k)
        self.deleting.pop(k, None)
        gone = jcopy(obj)
        gone["metadata"]["resourceVersion"] = self.next_rv()
        self.emit("DELETED", rt, md.get("namespace", ""), gone)
        if rt.kind == "CustomResourceDefinition":
            # Its custom resources go with it, and out of discovery.
            spec = obj.get("spec") or {}
            g, plural = spec.get("group"), (spec.get("names") or {}).get("plural")
            for ok, o in list(self.objects.items()):
                if ok[0] == g and ok[1] == plural:
                    self.delete(type_of(self, ok, o), o)
            self.types = [t for t in self.types if t.crd != md["name"]]

    # -- behaviour configuration --

    def behaviour(self, obj):
        """How the simulated controllers treat obj, from the configured behaviours (a later one
        wins): (mode "ready" | "never" | "fail", delay in seconds, delete delay in seconds, the
        status to set or None for the controller's own). By default a namespace takes the
        controller delay to go, other objects go at once."""
        mode, delay = "ready", self.delay_ms
        delete_delay = None
        status = None
        md = obj["metadata"]
        for b in self.behaviours:
            if b.get("kind") not in (None, obj.get("kind")):
                continue
            if b.get("name") not in (None, md.get("name")):
                continue
            if b.get("namespace") not in (None, md.get("namespace")):
                continue
            mode = b.get("mode", mode)
            delay = b.get("delay_ms", delay)
            delete_delay = b.get("delete_delay_ms", delete_delay)
            status = b.get("status", status)
        if delete_delay is None:
            delete_delay = delay if obj.get("kind") == "Namespace" else 0
        return mode, delay / 1000.0, delete_delay / 1000.0, status


def spec_of(obj):
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def same_content(a, b):
    """Whether two versions of an object differ only in what the server sets on every write
    (resourceVersion, generation, the time of managed fields entries)."""
    if {k: v for k, v in a.items() if k != "metadata"} != \
            {k: v for k, v in b.items() if k != "metadata"}:
        return False
    ma, mb = a.get("metadata", {}), b.get("metadata", {})
    skip = ("resourceVersion", "generation", "managedFields")
    if {k: v for k, v in ma.items() if k not in skip} != \
            {k: v for k, v in mb.items() if k not in skip}:
        return False
    fa, fb = ma.get("managedFields") or [], mb.get("managedFields") or []
    return len(fa) == len(fb) and all(
        {k: v for k, v in x.items() if k != "time"} == {k: v for k, v in y.items() if k != "time"}
        for x, y in zip(fa, fb))


def set_manager(obj, manager, operation, rt, part, paths):
    """Sets the field set of (manager, operation, subresource); drops emptied entries."""
    md = obj["metadata"]
    sub = "status" if part == "status" else ""
    entries = md.get("managedFields") or []
    found = False
    out = []
    for e in entries:
        if e["manager"] == manager and e["operation"] == operation and \
                e.get("subresource", "") == sub:
            found = True
            if from_fieldsv1(e.get("fieldsV1", {})) != paths:
                e = dict(e, fieldsV1=to_fieldsv1(paths), time=now_rfc3339())
            if paths:
                out.append(e)
        else:
            out.append(e)
    if not found and paths:
        e = {"manager": manager, "operation": operation,
             "apiVersion": obj.get("apiVersion") or rt.api_version(),
             "time": now_rfc3339(), "fieldsType": "FieldsV1", "fieldsV1": to_fieldsv1(paths)}
        if sub:
            e["subresource"] = sub
        out.append(e)
    md["managedFields"] = out


def prune_managers(obj):
    """Drops from every manager's set the paths that are no longer in the object."""
    out = []
    for e in obj["metadata"].get("managedFields") or []:
        paths = {p for p in from_fieldsv1(e.get("fieldsV1", {})) if get_at(obj, p) is not MISSING}
        if paths:
            out.append(dict(e, fieldsV1=to_fieldsv1(paths)))
    obj["metadata"]["managedFields"] = out


def apply_defaults(rt, obj):
    """The few defaults a real server sets that clients look at."""
    spec = obj.get("spec")
    if rt.kind == "Namespace":
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        obj.setdefault("status", {})["phase"] = "Active"
        obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = \
            obj["metadata"]["name"]
    if rt.kind == "Secret":
        sd = obj.pop("stringData", None)
        if sd:
            data = obj.setdefault("data", {})
            for k, v in sd.items():
                data[k] = base64.b64encode(str(v).encode()).decode()
        obj.setdefault("type", "Opaque")
    if not isinstance(spec, dict):
        return
    if rt.kind in ("Deployment", "StatefulSet"):
        spec.setdefault("replicas", 1)
    if rt.kind == "StatefulSet":
        spec.setdefault("updateStrategy", {"type": "RollingUpdate",
                                           "rollingUpdate": {"partition": 0}})
    if rt.kind == "DaemonSet":
        spec.setdefault("updateStrategy", {"type": "RollingUpdate"})
    if rt.kind == "Service":
        spec.setdefault("type", "ClusterIP")
        if spec["type"] != "ExternalName":
            spec.setdefault("clusterIP", "10.96.%d.%d" % (hash(obj["metadata"]["name"]) % 250,
                                                         len(obj["metadata"]["name"])))
        for p in spec.get("ports") or []:
            if isinstance(p, dict):
                p.setdefault("protocol", "TCP")
    pod = spec.get("template", {}).get("spec") if rt.kind in (
        "Deployment", "StatefulSet", "DaemonSet", "Job") else spec if rt.kind == "Pod" else None
    if isinstance(pod, dict):
        for c in (pod.get("containers") or []) + (pod.get("initContainers") or []):
            for p in (c.get("ports") or []) if isinstance(c, dict) else []:
                if isinstance(p, dict):
                    p.setdefault("protocol", "TCP")


NAME_RE = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")
LABEL_VALUE_RE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
LABEL_KEY_RE = re.compile(r"([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}"
                          r"[A-Za-z0-9])?")
MAX_BODY = 3 * 1024 * 1024  # a real server's limit on request bodies

# ---------------------------------------------------------------------------------------------
# Field validation: the fields a type declares (top level and spec for the built-in types here,
# the CRD's openAPIV3Schema for custom resources). Below what is listed anything goes.

ANY = {"x-kubernetes-preserve-unknown-fields": True}
META_FIELDS = ["name", "generateName", "namespace", "labels", "annotations", "finalizers",
               "ownerReferences", "uid", "resourceVersion", "generation", "creationTimestamp",
               "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink"]


def fields_schema(fields, spec=None):
    props = {f: ANY for f in fields}
    props.update({"apiVersion": ANY, "kind": ANY,
                  "metadata": {"type": "object", "properties": {f: ANY for f in META_FIELDS}}})
    if spec is not None:
        props["spec"] = {"type": "object", "properties": {f: ANY for f in spec}}
    return {"type": "object", "properties": props}


POD_TEMPLATE = ["selector", "template", "minReadySeconds", "revisionHistoryLimit"]
BUILTIN_SCHEMAS = {
    "Namespace": fields_schema(["status"], ["finalizers"]),
    "ConfigMap": fields_schema(["data", "binaryData", "immutable"]),
    "Secret": fields_schema(["data", "stringData", "type", "immutable"]),
    "ServiceAccount": fields_schema(["secrets", "imagePullSecrets",
                                     "automountServiceAccountToken"]),
    "Service": fields_schema(["status"], [
        "ports", "selector", "clusterIP", "clusterIPs", "type", "externalIPs", "sessionAffinity",
        "loadBalancerIP", "loadBalancerSourceRanges", "externalName", "externalTrafficPolicy",
        "healthCheckNodePort", "publishNotReadyAddresses", "sessionAffinityConfig",
        "ipFamilies", "ipFamilyPolicy", "allocateLoadBalancerNodePorts", "loadBalancerClass",
        "internalTrafficPolicy", "trafficDistribution"]),
    "Deployment": fields_schema(["status"], POD_TEMPLATE + [
        "replicas", "strategy", "paused", "progressDeadlineSeconds"]),
    "StatefulSet": fields_schema(["status"], POD_TEMPLATE + [
        "replicas", "volumeClaimTemplates", "serviceName", "podManagementPolicy",
        "updateStrategy", "persistentVolumeClaimRetentionPolicy", "ordinals"]),
    "DaemonSet": fields_schema(["status"], POD_TEMPLATE + ["updateStrategy"]),
    "Job": fields_schema(["status"], [
        "parallelism", "completions", "activeDeadlineSeconds", "podFailurePolicy",
        "successPolicy", "backoffLimit", "backoffLimitPerIndex", "maxFailedIndexes", "selector",
        "manualSelector", "template", "ttlSecondsAfterFinished", "completionMode", "suspend",
        "podReplacementPolicy", "managedBy"]),
    "Role": fields_schema(["rules"]),
    "ClusterRole": fields_schema(["rules", "aggregationRule"]),
    "RoleBinding": fields_schema(["subjects", "roleRef"]),
    "ClusterRoleBinding": fields_schema(["subjects", "roleRef"]),
    "CustomResourceDefinition": fields_schema(["status"], [
        "group", "names", "scope", "versions", "conversion", "preserveUnknownFields"]),
}


def type_schema(store, rt, version):
    """The schema unknown fields are checked against (ANY: no check)."""
    if rt.crd is None:
        return BUILTIN_SCHEMAS.get(rt.kind, ANY)
    crd = store.objects.get(("apiextensions.k8s.io", "customresourcedefinitions", "", rt.crd))
    if crd is None or crd["spec"].get("preserveUnknownFields"):
        return ANY
    for v in crd["spec"].get("versions", []):
        if v.get("name") == version:
            schema = jcopy((v.get("schema") or {}).get("openAPIV3Schema") or ANY)
            if isinstance(schema.get("properties"), dict):
                # apiVersion, kind and metadata are the server's, whatever the schema says.
                schema["properties"].update(fields_schema([])["properties"])
            return schema
    return ANY


def unknown_fields(value, schema, path=(), out=None):
    """The paths (tuples of keys and list indexes) in value that schema does not declare."""
    if out is None:
        out = []
    if not isinstance(schema, dict) or schema.get("x-kubernetes-preserve-unknown-fields"):
        return out
    if isinstance(value, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        if props is None:
            if isinstance(extra, dict):
                for k, v in value.items():
                    unknown_fields(v, extra, path + (k,), out)
            return out
        for k, v in value.items():
            if k in props:
                unknown_fields(v, props[k], path + (k,), out)
            elif isinstance(extra, dict):
                unknown_fields(v, extra, path + (k,), out)
            elif not extra:
                out.append(path + (k,))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, v in enumerate(value):
            unknown_fields(v, schema["items"], path + (i,), out)
    return out


def field_path_text(path):
    return "".join("[%d]" % p if isinstance(p, int) else "." + p for p in path)


def drop_path(obj, path):
    cur = obj
    for p in path[:-1]:
        try:
            cur = cur[p]
        except (KeyError, IndexError, TypeError):
            return
    if isinstance(cur, dict):
        cur.pop(path[-1], None)


JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "bool", int: "number",
              float: "number", type(None): "null"}


def check_shape(rt, obj):
    """400 for values of the wrong JSON type where this server looks (a real server's decoder
    refuses them the same way), so that nothing below trips over them."""
    def want(value, kind, where):
        if value is None or isinstance(value, kind):
            return
        raise bad_request("json: cannot unmarshal %s into Go struct field %s.%s of type %s" % (
            JSON_TYPES.get(type(value), "value"), rt.kind, where,
            {dict: "object", list: "array", str: "string"}[kind]))

    def want_each(values, kind, where):
        want(values, list, where)
        for v in values or []:
            want(v, kind, where)

    want(obj.get("metadata"), dict, "metadata")
    md = obj.get("metadata") or {}
    for f in ("name", "generateName", "namespace", "resourceVersion", "uid"):
        want(md.get(f), str, "metadata." + f)
    for f in ("labels", "annotations"):
        want(md.get(f), dict, "metadata." + f)
        for v in (md.get(f) or {}).values():
            want(v, str, "metadata." + f)
    want_each(md.get("finalizers"), str, "metadata.finalizers")
    want_each(md.get("ownerReferences"), dict, "metadata.ownerReferences")
    want_each(md.get("managedFields"), dict, "metadata.managedFields")
    for f in ("spec", "status"):
        want(obj.get(f), dict, f)
    if rt.kind in ("ConfigMap", "Secret"):
        for f in ("data", "stringData", "binaryData"):
            want(obj.get(f), dict, f)
            for v in (obj.get(f) or {}).values():
                want(v, str, f)
    spec = obj.get("spec") or {}
    for f in ("template", "selector", "names", "strategy", "updateStrategy"):
        want(spec.get(f), dict, "spec." + f)
    want_each(spec.get("versions"), dict, "spec.versions")
    want_each(spec.get("ports"), dict, "spec.ports")
    want_each(spec.get("finalizers"), str, "spec.finalizers")
    template = spec.get("template") or {}
    want(template.get("spec"), dict, "spec.template.spec")
    pod = template.get("spec") if rt.kind != "Pod" else spec
    for f in ("containers", "initContainers"):
        want_each((pod or {}).get(f), dict, "spec." + f)
        for c in (pod or {}).get(f) or []:
            for g in ("ports", "env", "volumeMounts"):
                want_each(c.get(g), dict, "spec.%s.%s" % (f, g))


def validate(rt, obj, whole=True):
    """422 Invalid for a bad name, and (for a whole object, not a partial apply configuration)
    for the few required fields checked here."""
    name = obj["metadata"].get("name", "")
    causes = []
    if not NAME_RE.fullmatch(name) or len(name) > 253:
        causes.append(("metadata.name", 'Invalid value: "%s": a lowercase RFC 1123 subdomain '
                       "must consist of lower case alphanumeric characters, '-' or '.', and "
                       "must start and end with an alphanumeric character" % name))
    md = obj["metadata"]
    labels = md.get("labels") or {}
    for k, v in labels.items() if isinstance(labels, dict) else []:
        if not isinstance(v, str) or not LABEL_VALUE_RE.fullmatch(v) or len(v) > 63:
            causes.append(("metadata.labels", 'Invalid value: "%s": a valid label must be an '
                           "empty string or consist of alphanumeric characters, '-', '_' or '.', "
                           "and must start and end with an alphanumeric character" % v))
        if not LABEL_KEY_RE.fullmatch(k):
            causes.append(("metadata.labels", 'Invalid value: "%s": name part must consist of '
                           "alphanumeric characters, '-', '_' or '.', and must start and end "
                           "with an alphanumeric character" % k))
    annotations = md.get("annotations") or {}
    if isinstance(annotations, dict) and sum(
            len(k) + len(str(v)) for k, v in annotations.items()) > 262144:
        # What makes client-side apply of a large CRD fail (its last-applied annotation).
        causes.append(("metadata.annotations", "Too long: must have at most 262144 bytes"))
    if not whole:
        if causes:
            raise invalid(rt, name, causes)
        return
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    if rt.kind in ("Deployment", "StatefulSet", "DaemonSet"):
        if "selector" not in spec:
            causes.append(("spec.selector", "Required value"))
        if not ((spec.get("template") or {}).get("spec") or {}).get("containers"):
            causes.append(("spec.template.spec.containers", "Required value"))
    if rt.kind == "CustomResourceDefinition":
        names = spec.get("names") or {}
        if not spec.get("group") or not names.get("plural") or not names.get("kind") or \
                not spec.get("versions"):
            causes.append(("spec", "Required value: group, names.plural, names.kind, versions"))
        elif name != names["plural"] + "." + spec["group"]:
            causes.append(("metadata.name", 'Invalid value: "%s": must be spec.names.plural+"."'
                           "+spec.group" % name))
    if causes:
        raise invalid(rt, name, causes)


# ---------------------------------------------------------------------------------------------
# Simulated controllers


def condition(ctype, status, reason="", message=""):
    t = now_rfc3339()
    c = {"type": ctype, "status": status, "lastTransitionTime": t}
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    return c


UNMANAGED = object()  # no simulated controller looks after this kind
MANAGED = {"CustomResourceDefinition", "Deployment", "StatefulSet", "DaemonSet", "Job", "Pod",
           "ClusterServiceVersion", "APIService"}


def desired_status(store, rt, obj, age):
    """The status the simulated controller wants for obj, age = seconds since its spec last
    changed: None (not yet), a status, (status, final) for a step on the way, or UNMANAGED."""
    mode, delay, _, given = store.behaviour(obj)
    if given is not None:
        # A status the test asked for (any kind, custom resources too), after the delay.
        return None if age < delay else with_generation(
            given, obj["metadata"].get("generation", 1))
    if rt.group == "operators.coreos.com" and rt.kind in OLM_KINDS:
        return None if age < delay else olm_status(store, rt, obj, mode)
    if rt.kind not in MANAGED or rt.crd is not None:
        return UNMANAGED
    kind = rt.kind
    gen = obj["metadata"].get("generation", 1)
    spec = obj.get("spec") or {}
    st = jcopy(obj.get("status") or {})
    if kind == "CustomResourceDefinition":
        # The names are accepted at once; the CRD is Established after the delay.
        names = dict(spec.get("names") or {})
        names.setdefault("singular", names.get("kind", "").lower())
        names.setdefault("listKind", names.get("kind", "") + "List")
        was = {c.get("type"): c.get("status") for c in st.get("conditions", []) or []}
        # Once Established, a CRD stays so (a change of its spec does not take it away).
        done = was.get("Established") == "True" or (mode != "never" and age >= delay)
        conds = [condition("NamesAccepted", "True", "NoConflicts", "no conflicts found"),
                 condition("Established", "True", "InitialNamesAccepted",
                           "the initial names have been accepted") if done else
                 condition("Established", "False", "Installing", "the CRD is being installed")]
        new = keep_times(st, {"conditions": conds, "acceptedNames": names,
                              "storedVersions": [v["name"] for v in spec.get("versions", [])
                                                 if v.get("storage")]})
        return new, done or mode == "never"
    if kind == "ClusterServiceVersion" and age < delay:
        return {"phase": "Pending", "reason": "RequirementsUnknown",
                "message": "requirements not yet checked"}, False
    if age < delay:
        return None
    if kind == "Deployment":
        n = spec.get("replicas", 1)
        if mode == "never":
            return keep_times(st, {"observedGeneration": gen, "replicas": n,
                                   "updatedReplicas": n, "unavailableReplicas": n,
                                   "conditions": [
                                       condition("Available", "False", "MinimumReplicasUnavailable",
                                                 "Deployment does not have minimum availability."),
                                       condition("Progressing", "True", "ReplicaSetUpdated",
                                                 "ReplicaSet is progressing.")]})
        if mode == "fail":
            return keep_times(st, {"observedGeneration": gen, "replicas": n,
                                   "updatedReplicas": n, "unavailableReplicas": n,
                                   "conditions": [
                                       condition("Available", "False", "MinimumReplicasUnavailable",
                                                 "Deployment does not have minimum availability."),
                                       condition("Progressing", "False", "ProgressDeadlineExceeded",
                                                 'ReplicaSet "%s" has timed out progressing.'
                                                 % obj["metadata"]["name"])]})
        s = {"observedGeneration": gen, "replicas": n, "updatedReplicas": n, "readyReplicas": n,
             "availableReplicas": n,
             "conditions": [condition("Available", "True", "MinimumReplicasAvailable",
                                      "Deployment has minimum availability."),
                            condition("Progressing", "True", "NewReplicaSetAvailable",
                                      'ReplicaSet "%s" has successfully progressed.'
                                      % obj["metadata"]["name"])]}
        if n == 0:
            for f in ("readyReplicas", "availableReplicas"):
                del s[f]
        return keep_times(st, s)
    if kind == "StatefulSet":
        n = spec.get("replicas", 1)
        rev = "%s-%s" % (obj["metadata"]["name"], hashlib.sha1(
            json.dumps(spec.get("template", {}), sort_keys=True).encode()).hexdigest()[:10])
        s = {"observedGeneration": gen, "replicas": n, "currentReplicas": n,
             "updatedReplicas": n, "readyReplicas": 0 if mode != "ready" else n,
             "availableReplicas": 0 if mode != "ready" else n,
             "currentRevision": rev, "updateRevision": rev, "collisionCount": 0}
        return keep_times(st, s)
    if kind == "DaemonSet":
        ok = 1 if mode == "ready" else 0
        return keep_times(st, {"observedGeneration": gen, "desiredNumberScheduled": 1,
                               "currentNumberScheduled": 1, "updatedNumberScheduled": 1,
                               "numberReady": ok, "numberAvailable": ok,
                               "numberUnavailable": 1 - ok, "numberMisscheduled": 0})
    if kind == "Job":
        if mode == "never":
            return keep_times(st, {"active": 1, "startTime": st.get("startTime", now_rfc3339())})
        if mode == "fail":
            return keep_times(st, {"failed": 1, "startTime": st.get("startTime", now_rfc3339()),
                                   "conditions": [condition("FailureTarget", "True",
                                                            "BackoffLimitExceeded",
                                                            "Job has reached the specified "
                                                            "backoff limit"),
                                                  condition("Failed", "True",
                                                            "BackoffLimitExceeded",
                                                            "Job has reached the specified "
                                                            "backoff limit")]})
        return keep_times(st, {"succeeded": 1, "startTime": st.get("startTime", now_rfc3339()),
                               "completionTime": st.get("completionTime", now_rfc3339()),
                               "conditions": [condition("SuccessCriteriaMet", "True",
                                                        "CompletionsReached",
                                                        "Reached expected number of "
                                                        "succeeded pods"),
                                              condition("Complete", "True", "CompletionsReached",
                                                        "Reached expected number of "
                                                        "succeeded pods")]})
    if kind == "Pod":
        ready = "True" if mode == "ready" else "False"
        return keep_times(st, {"phase": "Running" if mode != "fail" else "Failed",
                               "conditions": [condition("Initialized", "True"),
                                              condition("ContainersReady", ready),
                                              condition("Ready", ready),
                                              condition("PodScheduled", "True")]})
    if kind == "ClusterServiceVersion":
        if mode == "never":
            return keep_times(st, {"phase": "Pending", "reason": "RequirementsUnknown",
                                   "message": "requirements not yet checked"})
        if mode == "fail":
            return keep_times(st, {"phase": "Failed", "reason": "InstallComponentFailed",
                                   "message": "install strategy failed"})
        return keep_times(st, {"phase": "Succeeded", "reason": "InstallSucceeded",
                               "message": "install strategy completed with no errors"})
    if kind == "APIService":
        ok = "True" if mode == "ready" else "False"
        return keep_times(st, {"conditions": [condition("Available", ok,
                                                        "Passed" if ok == "True"
                                                        else "FailedDiscoveryCheck",
                                                        "all checks passed" if ok == "True"
                                                        else "failing or missing response")]})
    return None


OLM_KINDS = {"Subscription", "InstallPlan", "CatalogSource", "OperatorGroup"}


def olm_status(store, rt, obj, mode):
    """OLM's operators, roughly (with --olm): a CatalogSource becomes READY, an OperatorGroup
    lists its namespaces, a Subscription gets an InstallPlan (approved at once unless its
    installPlanApproval is Manual) and, once that is Complete, its CSV (spec.startingCSV, else
    <package>.v0.0.1), which the CSV controller then takes to Succeeded. Mode "fail": the
    Subscription's resolution fails, the CatalogSource is unreachable; "never": no InstallPlan."""
    md, spec = obj["metadata"], obj.get("spec") or {}
    ns, st = md.get("namespace", ""), obj.get("status") or {}
    kind = rt.kind
    if kind == "CatalogSource":
        state = "READY" if mode == "ready" else "TRANSIENT_FAILURE"
        return {"connectionState": {"lastObservedState": state,
                                    "address": "%s.%s.svc:50051" % (md["name"], ns)}}
    if kind == "OperatorGroup":
        return {"namespaces": spec.get("targetNamespaces") or [""],
                "lastUpdated": st.get("lastUpdated") or now_rfc3339()}
    if kind == "InstallPlan":
        if not spec.get("approved"):
            return keep_times(st, {"phase": "RequiresApproval", "conditions": [
                condition("Installed", "False", "RequiresApproval")]})
        for csv in spec.get("clusterServiceVersionNames") or []:
            ensure_csv(store, ns, csv, (md.get("labels") or {}).get("kpkg-test/package", csv))
        return keep_times(st, {"phase": "Complete", "conditions": [
            condition("Installed", "True", "InstallSucceeded")]})
    # A Subscription.
    pkg = spec.get("name") or md["name"]
    if mode == "fail":
        return keep_times(st, {"state": "", "conditions": [condition(
            "ResolutionFailed", "True", "ConstraintsNotSatisfiable",
            "no operators found in package %s in the catalog referenced by subscription %s"
            % (pkg, md["name"]))]})
    if mode == "never":
        return {"state": "UpgradePending"}
    csv = spec.get("startingCSV") or pkg + ".v0.0.1"
    ip_name = "install-" + hashlib.sha1(("%s/%s" % (ns, md["name"])).encode()).hexdigest()[:5]
    ip_rt = store.find_kind("operators.coreos.com", "InstallPlan")
    ip = store.objects.get(store.key(ip_rt, ns, ip_name))
    if ip is None:
        manual = spec.get("installPlanApproval") == "Manual"
        ip = store.write_new(ip_rt, ns, {
            "apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
            "metadata": {"name": ip_name, "namespace": ns,
                         "labels": {"kpkg-test/package": pkg},
                         "ownerReferences": [{"apiVersion": "operators.coreos.com/v1alpha1",
                                              "kind": "Subscription", "name": md["name"],
                                              "uid": md["uid"]}]},
            "spec": {"approval": "Manual" if manual else "Automatic", "approved": not manual,
                     "clusterServiceVersionNames": [csv], "generation": 1}},
            "catalog", "Update", "main")
    ref = {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
           "name": ip_name, "namespace": ns, "uid": ip["metadata"]["uid"]}
    if (ip.get("status") or {}).get("phase") != "Complete":
        # Not final: looked at again until the InstallPlan is approved and complete.
        return keep_times(st, {"state": "UpgradePending", "currentCSV": csv,
                               "installPlanRef": ref, "installPlanGeneration": 1,
                               "conditions": [condition("InstallPlanPending", "True",
                                                        "RequiresApproval")]}), False
    return keep_times(st, {"state": "AtLatestKnown", "currentCSV": csv, "installedCSV": csv,
                           "installPlanRef": ref, "installPlanGeneration": 1,
                           "conditions": [condition("CatalogSourcesUnhealthy", "False",
                                                    "AllCatalogSourcesHealthy")]})


def ensure_csv(store, ns, name, pkg):
    """The CSV an InstallPlan installs (created once; the CSV controller does the rest)."""
    rt = store.find_kind("operators.coreos.com", "ClusterServiceVersion")
    if store.key(rt, ns, name) in store.objects:
        return
    store.write_new(rt, ns, {
        "apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
        "metadata": {"name": name, "namespace": ns,
                     "labels": {"operators.coreos.com/%s.%s" % (pkg, ns): ""}},
        "spec": {"displayName": pkg, "install": {"strategy": "deployment"}}},
        "olm", "Update", "main")


def with_generation(v, gen):
    """v with every "$generation" string replaced by the object's generation."""
    if isinstance(v, dict):
        return {k: with_generation(x, gen) for k, x in v.items()}
    if isinstance(v, list):
        return [with_generation(x, gen) for x in v]
    return gen if v == "$generation" else v


def keep_times(old, new):
    """new, with the lastTransitionTime of conditions whose status did not change kept."""
    before = {c.get("type"): c for c in old.get("conditions", []) or []}
    for c in new.get("conditions", []):
        b = before.get(c["type"])
        if b and b.get("status") == c["status"] and "lastTransitionTime" in b:
            c["lastTransitionTime"] = b["lastTransitionTime"]
    return new


def controller_loop(store, stop):
    while not stop.wait(0.02):
        with store.lock:
            try:
                tick(store)
            except Exception:  # a bug: say so, and keep the controllers running
                import traceback
                traceback.print_exc()


def tick(store):
    """One pass of the simulated controllers over the objects that may need them."""
    now = time.time()
    for k in list(store.pending):
        obj = store.objects.get(k)
        if obj is None:
            store.pending.discard(k)
            continue
        rt = store.find_kind(k[0], obj.get("kind")) or rt_for_key(store, k)
        if rt is None:  # a custom resource whose CRD is no longer established
            store.pending.discard(k)
            continue
        want = desired_status(store, rt, obj, now - store.changed.get(k, now))
        if want is UNMANAGED:
            store.pending.discard(k)
            continue
        if want is None:
            continue  # not yet: the delay has not passed
        final = True
        if isinstance(want, tuple):  # (status, final): an intermediate step
            want, final = want
        if final:
            store.pending.discard(k)
        if obj.get("status") == want:
            continue
        new = jcopy(obj)
        new["status"] = want
        new = store.replace(rt, obj, new)
        if rt.kind == "CustomResourceDefinition":
            sync_crd(store, new)
    # Delayed deletes: a namespace takes its objects with it; an object with finalizers stays
    # (marked) until they are gone.
    for k, until in list(store.deleting.items()):
        if now < until:
            continue
        store.deleting.pop(k, None)
        obj = store.objects.get(k)
        if obj is None:
            continue
        if obj.get("kind") == "Namespace":
            ns = k[3]
            for ok, o in list(store.objects.items()):
                if ok[2] == ns:
                    store.delete(type_of(store, ok, o), o)
        if not obj["metadata"].get("finalizers"):
            store.delete(type_of(store, k, obj), obj)


def version_priority(v):
    """A sort key putting the versions of a group in Kubernetes' order of preference: GA, then
    beta, then alpha, newer first (v2 > v1 > v1beta2 > v1beta1 > v1alpha1), then other names in
    alphabetical order."""
    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", v)
    if not m:
        return (3, 0, 0, v)
    stage = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    return (stage, -int(m.group(1)), -int(m.group(3) or 0), v)


def type_of(store, k, obj):
    """The type of a stored object, or a stand-in when it is no longer served (a custom
    resource whose CRD lost its Established condition) so that it can still be deleted."""
    return rt_for_key(store, k) or RType(k[0], [obj["apiVersion"].rpartition("/")[2]],
                                         obj.get("kind", ""), k[1], namespaced=bool(k[2]))


def rt_for_key(store, k):
    """The type of a stored object's key (None when it is no longer served)."""
    return next((t for t in store.types if t.group == k[0] and t.plural == k[1]), None)


def sync_crd(store, crd):
    """Serves (or stops serving) the custom resource a CRD defines: only once Established."""
    name = crd["metadata"]["name"]
    store.types = [t for t in store.types if t.crd != name]
    conds = {c["type"]: c["status"] for c in (crd.get("status") or {}).get("conditions", [])}
    if conds.get("Established") != "True" or crd["metadata"].get("deletionTimestamp"):
        return
    spec = crd["spec"]
    names = spec["names"]
    versions = [v for v in spec.get("versions", []) if v.get("served", True)]
    # The preferred version first, by Kubernetes' version priority (not by storage).
    versions.sort(key=lambda v: version_priority(v.get("name", "")))
    if not versions:
        return
    status_sub = any("status" in (v.get("subresources") or {}) for v in versions)
    store.types.append(RType(spec["group"], [v["name"] for v in versions], names["kind"],
                             names["plural"], names.get("singular"),
                             spec.get("scope", "Namespaced") == "Namespaced",
                             short=names.get("shortNames", []), status=status_sub,
                             categories=names.get("categories", []), crd=name))


# ---------------------------------------------------------------------------------------------
# Discovery and OpenAPI documents


def resource_verbs(rt):
    return ALL_VERBS


def aggregated_discovery(store, core):
    items = []
    for g, versions in store.groups():
        if (g == "") != core:
            continue
        vs = []
        for v in versions:
            res = []
            for t in store.types:
                if t.group != g or v not in t.versions:
                    continue
                r = {"resource": t.plural,
                     "responseKind": {"group": g, "version": v, "kind": t.kind},
                     "scope": "Namespaced" if t.namespaced else "Cluster",
                     "singularResource": t.singular, "verbs": resource_verbs(t)}
                if t.short:
                    r["shortNames"] = t.short
                if t.categories:
                    r["categories"] = t.categories
                if t.status:
                    r["subresources"] = [{"subresource": "status",
                                          "responseKind": {"group": g, "version": v,
                                                           "kind": t.kind},
                                          "verbs": ["get", "patch", "update"]}]
                res.append(r)
            vs.append({"version": v, "resources": res, "freshness": "Current"})
        items.append({"metadata": {"name": g, "creationTimestamp": None}, "versions": vs})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2",
            "metadata": {}, "items": items}


def group_entry(g, versions):
    vs = [{"groupVersion": g + "/" + v, "version": v} for v in versions]
    return {"name": g, "versions": vs, "preferredVersion": vs[0]}


def resource_list(store, g, v):
    res = []
    for t in store.types:
        if t.group != g or v not in t.versions:
            continue
        r = {"name": t.plural, "singularName": t.singular, "namespaced": t.namespaced,
             "kind": t.kind, "verbs": resource_verbs(t)}
        if t.short:
            r["shortNames"] = t.short
        if t.categories:
            r["categories"] = t.categories
        res.append(r)
        if t.status:
            res.append({"name": t.plural + "/status", "singularName": "", "namespaced":
                        t.namespaced, "kind": t.kind, "verbs": ["get", "patch", "update"]})
    return {"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": v if g == "" else g + "/" + v, "resources": res}


def gv_path(g, v):
    return "api/" + v if g == "" else "apis/%s/%s" % (g, v)


def openapi_gv(store, g, v):
    """An OpenAPI v3 document for one group/version: each resource's item path with a PATCH
    operation that names its kind and the fieldValidation parameter (what kubectl checks before
    it relies on server-side field validation)."""
    paths, schemas = {}, {}
    q = lambda n: {"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": True}}
    for t in store.types:
        if t.group != g or v not in t.versions:
            continue
        gvk = {"group": g, "version": v, "kind": t.kind}
        sname = "%s.%s.%s" % ("io.k8s.api" if not t.crd else g, (g or "core").split(".")[0],
                              v) + "." + t.kind
        # The schemas carry no x-kubernetes-group-version-kind: kubectl's client-side apply then
        # computes its patches from its built-in types rather than from these (empty) schemas.
        schemas[sname] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                          "properties": {"apiVersion": {"type": "string"},
                                         "kind": {"type": "string"},
                                         "metadata": {"type": "object",
                                                      "x-kubernetes-preserve-unknown-fields":
                                                          True}}}
        ref = {"$ref": "#/components/schemas/" + sname}
        base = "/" + gv_path(g, v) + ("/namespaces/{namespace}" if t.namespaced else "")
        item = base + "/" + t.plural + "/{name}"
        params = [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}]
        if t.namespaced:
            params.append({"name": "namespace", "in": "path", "required": True,
                           "schema": {"type": "string"}})
        body = {"content": {ct: {"schema": {"type": "object"}} for ct in (
            "application/apply-patch+yaml", "application/json-patch+json",
            "application/merge-patch+json", "application/strategic-merge-patch+json")},
            "required": True}
        ok = {"200": {"description": "OK",
                      "content": {"application/json": {"schema": ref}}},
              "201": {"description": "Created",
                      "content": {"application/json": {"schema": ref}}}}
        paths[item] = {
            "parameters": params,
            "get": {"operationId": "read" + t.kind, "responses": {"200": ok["200"]},
                    "x-kubernetes-action": "get", "x-kubernetes-group-version-kind": gvk},
            "put": {"operationId": "replace" + t.kind,
                    "parameters": [q("dryRun"), q("fieldManager"), q("fieldValidation")],
                    "requestBody": {"content": {"application/json": {"schema": ref}},
                                    "required": True},
                    "responses": ok, "x-kubernetes-action": "put",
                    "x-kubernetes-group-version-kind": gvk},
            "patch": {"operationId": "patch" + t.kind,
                      "parameters": [q("dryRun"), q("fieldManager"), q("fieldValidation"),
                                     {"name": "force", "in": "query",
                                      "schema": {"type": "boolean", "uniqueItems": True}}],
                      "requestBody": body, "responses": ok, "x-kubernetes-action": "patch",
                      "x-kubernetes-group-version-kind": gvk},
            "delete": {"operationId": "delete" + t.kind, "responses": {"200": ok["200"]},
                       "x-kubernetes-action": "delete", "x-kubernetes-group-version-kind": gvk},
        }
        paths[base + "/" + t.plural] = {
            "get": {"operationId": "list" + t.kind, "responses": {"200": {"description": "OK"}},
                    "x-kubernetes-action": "list", "x-kubernetes-group-version-kind": gvk},
            "post": {"operationId": "create" + t.kind,
                     "parameters": [q("dryRun"), q("fieldManager"), q("fieldValidation")],
                     "requestBody": {"content": {"application/json": {"schema": ref}}},
                     "responses": ok, "x-kubernetes-action": "post",
                     "x-kubernetes-group-version-kind": gvk},
        }
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": VERSION["gitVersion"]},
            "paths": paths, "components": {"schemas": schemas}}


def openapi_index(store):
    paths = {}
    for g, versions in store.groups():
        for v in versions:
            doc = json.dumps(openapi_gv(store, g, v), sort_keys=True).encode()
            h = hashlib.sha512(doc).hexdigest()[:64].upper()
            paths[gv_path(g, v)] = {"serverRelativeURL": "/openapi/v3/%s?hash=%s"
                                                         % (gv_path(g, v), h)}
    return {"paths": paths}


# ---------------------------------------------------------------------------------------------
# The HTTP side


def socketserver_bind(server):
    TCPServer.server_bind(server)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, addr, args, store, stop, control_only=False):
        super().__init__(addr, Handler)
        self.args = args
        self.store = store
        self.stop = stop
        self.control_only = control_only  # the plain-HTTP listener for /__test/ only
        self.ssl_ctx = None
        if args.tls_cert and not control_only:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(args.tls_cert, args.tls_key)
            ctx.set_alpn_protocols(["http/1.1"])
            if args.client_ca:
                ctx.load_verify_locations(args.client_ca)
                ctx.verify_mode = ssl.CERT_OPTIONAL
            self.ssl_ctx = ctx

    def server_bind(self):
        # HTTPServer's own would look the host name up (a slow reverse DNS query here).
        socketserver_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def get_request(self):
        sock, addr = self.socket.accept()
        # Headers and body go out in separate writes: without this, Nagle's algorithm and the
        # client's delayed ACK would hold every reply back ~40 ms.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.ssl_ctx is not None:
            # The handshake runs in the request's thread, on its first read.
            sock = self.ssl_ctx.wrap_socket(sock, server_side=True,
                                            do_handshake_on_connect=False)
        return sock, addr

    def handle_error(self, request, client_address):
        # A client that went away or failed the TLS handshake is no server error.
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, ssl.SSLError, socket.timeout, OSError)):
            return
        super().handle_error(request, client_address)


class DropConnection(Exception):
    pass


class Headers:
    """Request headers, looked up without regard to case (what the handler needs of them)."""

    def __init__(self, pairs):
        self.pairs = pairs
        self.map = {}
        for k, v in pairs:
            self.map.setdefault(k.lower(), v)

    def get(self, name, default=None):
        return self.map.get(name.lower(), default)

    def __getitem__(self, name):
        return self.map.get(name.lower())

    def __contains__(self, name):
        return name.lower() in self.map

    def items(self):
        return list(self.pairs)


def fast_parse_headers(fp, _class=None):
    """http.client.parse_headers without the e-mail parser (a third of each request's time)."""
    pairs = []
    while True:
        line = fp.readline(65537)
        if len(line) > 65536:
            raise http.client.LineTooLong("header line")
        if line in (b"\r\n", b"\n", b""):
            break
        if len(pairs) > 100:
            raise http.client.HTTPException("got more than 100 headers")
        text = line.decode("iso-8859-1").rstrip("\r\n")
        if text[:1] in (" ", "\t") and pairs:  # a folded continuation line
            pairs[-1] = (pairs[-1][0], pairs[-1][1] + " " + text.strip())
            continue
        name, _, value = text.partition(":")
        pairs.append((name.strip(), value.strip()))
    return Headers(pairs)


# http.server reads request headers through this function; the server process has no other use
# for it.
http.client.parse_headers = fast_parse_headers


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kpkg-test-apiserver"

    def log_message(self, fmt, *args):
        pass

    # -- plumbing --

    def setup(self):
        super().setup()
        if isinstance(self.connection, ssl.SSLSocket):
            try:
                self.connection.do_handshake()
            except (ssl.SSLError, OSError):
                self.close_connection = True
                raise

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def send(self, code, body, ctype="application/json", headers=None):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-cache, private")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        for w in getattr(self, "warnings", []):
            self.send_header("Warning", '299 - "%s"' % w.replace('"', '\\"'))
        self.log_request(code)
        # The end of the headers and the body in one write (end_headers would send apart).
        self._headers_buffer.append(b"\r\n")
        if self.command != "HEAD":
            self._headers_buffer.append(data)
        self.flush_headers()
        self.status_sent = code

    def send_error_status(self, e):
        self.send(e.code, e.status(), headers=e.headers)

    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_PUT(self):
        self.dispatch()

    def do_PATCH(self):
        self.dispatch()

    def do_DELETE(self):
        self.dispatch()

    def do_HEAD(self):
        self.dispatch()

    def dispatch(self):
        store = self.server.store
        url = urllib.parse.urlsplit(self.path)
        self.url_path = url.path
        self.raw_query = url.query
        self.fault = None
        self.query = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query,
                                                                 keep_blank_values=True).items()}
        self.status_sent = 0
        self.warnings = []
        self.log_entry = None
        body = self.read_body()
        self.req_body = body
        if url.path.startswith("/__test/") or self.server.control_only:
            try:
                self.control(url.path, body)
            except ApiError as e:
                self.send_error_status(e)
            return
        self.log_entry = {"method": self.command, "path": url.path, "query": url.query,
                          "content_type": self.headers.get("Content-Type", ""),
                          "user_agent": self.headers.get("User-Agent", ""), "status": 0}
        try:
            if len(body) > MAX_BODY:
                raise ApiError(413, "RequestEntityTooLarge", "Request entity too large: limit is "
                               "%d" % MAX_BODY, {})
            fault = self.fault = self.take_fault()
            if fault is not None:
                if fault.get("delay_ms"):
                    time.sleep(fault["delay_ms"] / 1000.0)
                if fault.get("exit"):
                    self.log_request(0)
                    os._exit(0)
                if fault.get("hang"):
                    self.log_request(0)  # logged now: it is never answered
                    while not self.client_gone() and not self.server.stop.is_set():
                        time.sleep(0.05)
                    raise DropConnection()
                if fault.get("drop"):
                    raise DropConnection()
                if fault.get("forbidden"):
                    raise ApiError(403, "Forbidden", fault.get("message") or
                                   'forbidden: User "system:anonymous" cannot %s path "%s"'
                                   % (self.command.lower(), url.path), {})
                if fault.get("status"):
                    code = int(fault["status"])
                    reason = fault.get("reason") or {
                        400: "BadRequest", 403: "Forbidden", 404: "NotFound", 409: "Conflict",
                        410: "Expired", 422: "Invalid", 429: "TooManyRequests",
                        500: "InternalError", 503: "ServiceUnavailable",
                        504: "Timeout"}.get(code, "Unknown")
                    hdrs = {}
                    if fault.get("retry_after") is not None:
                        hdrs["Retry-After"] = str(fault["retry_after"])
                    raise ApiError(code, reason, fault.get("message") or
                                   "injected fault: %d" % code,
                                   {"retryAfterSeconds": fault["retry_after"]}
                                   if fault.get("retry_after") is not None else {}, hdrs)
            self.authenticate()
            self.route(url.path, body)
        except ApiError as e:
            self.send_error_status(e)
        except DropConnection:
            self.close_connection = True
            self.log_request(0)
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as e:  # a bug here: answer 500 rather than hang the client
            import traceback
            traceback.print_exc()
            try:
                self.send_error_status(ApiError(500, "InternalError", "internal error: %s" % e))
            except OSError:
                pass
        self.log_request(self.status_sent)

    def log_request(self, status):
        """Adds this request to the log once, before its reply goes out: a client that has its
        answer finds the request in the log."""
        entry, self.log_entry = self.log_entry, None
        if entry is not None:
            entry["status"] = status
            with self.server.store.lock:
                self.server.store.requests.append(entry)

    def client_gone(self):
        """Whether the client closed the connection (a watching client sends nothing more)."""
        try:
            r, _, _ = select.select([self.connection], [], [], 0)
            if not r:
                return False
            if isinstance(self.connection, ssl.SSLSocket):
                return True
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def take_fault(self):
        store = self.server.store
        with store.lock:
            for f in store.faults:
                if f.get("count", 1) == 0:
                    continue
                if f.get("method") not in (None, self.command):
                    continue
                if not re.search(f.get("path", ""), self.url_path):
                    continue
                if not re.search(f.get("query", ""), self.raw_query):
                    continue
                if f.get("count", 1) > 0:
                    f["count"] = f.get("count", 1) - 1
                return f
        return None

    def authenticate(self):
        a = self.server.args
        if not (a.token or a.basic or a.client_ca):
            return
        if a.client_ca and isinstance(self.connection, ssl.SSLSocket) and \
                self.connection.getpeercert():
            return
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Bearer ") and auth[7:].strip() in (a.token or []):
            return
        if auth.startswith("Basic ") and a.basic:
            try:
                if base64.b64decode(auth[6:].strip()).decode() == a.basic:
                    return
            except ValueError:
                pass
        raise ApiError(401, "Unauthorized", "Unauthorized")

    # -- the control API --

    def control(self, path, body):
        store = self.server.store
        if path == "/__test/config" and self.command == "POST":
            try:
                cfg = json.loads(body or b"{}")
            except ValueError as e:
                raise bad_request("config is no JSON: %s" % e)
            check_config(cfg)
            with store.lock:
                if "delay_ms" in cfg:
                    store.delay_ms = cfg["delay_ms"]
                store.behaviours += cfg.get("behaviours", [])
                store.pending |= set(store.objects)  # the controllers look again
                store.faults += [dict(f) for f in cfg.get("faults", [])]
            self.send(200, {"ok": True})
        elif path == "/__test/status" and self.command == "POST":
            try:
                req = json.loads(body or b"{}")
                group = req["apiVersion"].rpartition("/")[0]
                kind, name, status = req["kind"], req["name"], req["status"]
            except (ValueError, KeyError, TypeError, AttributeError) as e:
                raise bad_request("want apiVersion, kind, name, status (and namespace): %s" % e)
            with store.lock:
                rt = store.find_kind(group, kind)
                if rt is None:
                    raise ApiError(404, "NotFound", "no such kind: %s" % kind)
                old = store.objects.get(store.key(rt, req.get("namespace", ""), name))
                if old is None:
                    raise not_found(rt, name)
                new = jcopy(old)
                new["status"] = status
                new = store.replace(rt, old, new)
                store.pending.discard(store.key(rt, req.get("namespace", ""), name))
                self.send(200, new)
        elif path == "/__test/reset" and self.command == "POST":
            store.reset()
            self.send(200, {"ok": True})
        elif path == "/__test/requests" and self.command == "GET":
            with store.lock:
                self.send(200, {"items": list(store.requests)})
        elif path == "/__test/requests/clear" and self.command == "POST":
            with store.lock:
                store.requests = []
            self.send(200, {"ok": True})
        elif path == "/__test/objects" and self.command == "GET":
            with store.lock:
                items = [store.objects[k] for k in sorted(store.objects)]
                self.send(200, {"items": items})
        else:
            raise ApiError(404, "NotFound", "no such control endpoint: %s %s"
                           % (self.command, path))

    # -- routing --

    def route(self, path, body):
        store = self.server.store
        accept = self.headers.get("Accept", "")
        parts = [p for p in path.split("/") if p]
        if path == "/version":
            return self.send(200, VERSION)
        if path in ("/healthz", "/readyz", "/livez"):
            return self.send(200, b"ok", "text/plain; charset=utf-8")
        if path == "/openapi/v2":
            # An empty protobuf message is an empty (valid) document: client-go then relies on
            # the v3 documents below.
            return self.send(200, b"", "application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
        if path == "/openapi/v3":
            with store.lock:
                return self.send(200, openapi_index(store))
        if path.startswith("/openapi/v3/"):
            rest = parts[2:]
            with store.lock:
                if rest[:1] == ["api"] and len(rest) == 2:
                    g, v = "", rest[1]
                elif rest[:1] == ["apis"] and len(rest) == 3:
                    g, v = rest[1], rest[2]
                else:
                    raise unknown_resource()
                if not any(gg == g and v in vs for gg, vs in store.groups()):
                    raise unknown_resource()
                return self.send(200, openapi_gv(store, g, v))
        aggregated = not self.server.args.legacy_discovery and \
            "as=APIGroupDiscoveryList" in accept and "v=v2" in accept
        if parts == ["api"]:
            if aggregated:
                with store.lock:
                    return self.send(200, aggregated_discovery(store, True), AGGREGATED_CT)
            return self.send(200, {"kind": "APIVersions", "versions": ["v1"],
                                   "serverAddressByClientCIDRs": [
                                       {"clientCIDR": "0.0.0.0/0",
                                        "serverAddress": "127.0.0.1:6443"}]})
        if parts == ["apis"]:
            with store.lock:
                if aggregated:
                    return self.send(200, aggregated_discovery(store, False), AGGREGATED_CT)
                return self.send(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                    group_entry(g, vs) for g, vs in store.groups() if g != ""]})
        with store.lock:
            if parts == ["api", "v1"]:
                return self.send(200, resource_list(store, "", "v1"))
            if len(parts) == 2 and parts[0] == "apis":
                for g, vs in store.groups():
                    if g == parts[1]:
                        e = group_entry(g, vs)
                        e.update(kind="APIGroup", apiVersion="v1")
                        return self.send(200, e)
                raise unknown_resource()
            if len(parts) == 3 and parts[0] == "apis":
                if any(g == parts[1] and parts[2] in vs for g, vs in store.groups()):
                    return self.send(200, resource_list(store, parts[1], parts[2]))
                raise unknown_resource()
        if len(parts) >= 3 and parts[:2] == ["api", "v1"]:
            return self.resource("", "v1", parts[2:], body)
        if len(parts) >= 4 and parts[0] == "apis":
            return self.resource(parts[1], parts[2], parts[3:], body)
        raise unknown_resource()

    def resource(self, group, version, rest, body):
        """rest: [namespaces, ns, plural, name?, sub?] or [plural, name?, sub?]."""
        store = self.server.store
        ns = ""
        if rest[0] == "namespaces" and len(rest) >= 3 and not (
                len(rest) == 3 and rest[2] in ("status", "finalize")):
            ns, rest = rest[1], rest[2:]
        plural, name, sub = rest[0], rest[1] if len(rest) > 1 else "", \
            rest[2] if len(rest) > 2 else ""
        if len(rest) > 3:
            raise unknown_resource()
        with store.lock:
            rt = store.find_type(group, version, plural)
        if rt is None or (ns and not rt.namespaced):
            raise unknown_resource()
        if sub and sub != "status" and not (sub == "finalize" and rt.kind == "Namespace"):
            raise unknown_resource()
        if sub == "status" and not rt.status:
            raise unknown_resource()
        m = self.command
        if m in ("GET", "HEAD") and name:
            return self.get(rt, version, ns, name)
        if m == "GET":
            if self.query.get("watch") in ("true", "1"):
                return self.watch(rt, version, ns)
            return self.list(rt, version, ns)
        if m == "POST" and not name:
            return self.create(rt, version, ns, body)
        if m == "PUT" and name:
            return self.update(rt, version, ns, name, sub or "main", body)
        if m == "PATCH" and name:
            return self.patch(rt, version, ns, name, sub or "main", body)
        if m == "DELETE" and name:
            return self.delete(rt, version, ns, name)
        if m == "DELETE":
            return self.delete_collection(rt, version, ns)
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the "
                       "requested resource", {})

    # -- helpers for objects --

    def out(self, rt, version, obj):
        # A shallow copy: stored objects are never changed in place, and callers that change
        # what they get copy it first.
        o = dict(obj)
        o["apiVersion"] = rt.api_version(version)
        o["kind"] = rt.kind
        return o

    def dry_run(self):
        d = self.query.get("dryRun", "")
        if d and d != "All":
            raise bad_request('Invalid dryRun value "%s": only "All" is accepted' % d)
        return d == "All"

    def check_namespace(self, rt, ns):
        store = self.server.store
        if not rt.namespaced:
            return
        nso = store.objects.get(("", "namespaces", "", ns))
        if nso is None:
            raise ns_not_found(ns)
        if nso["metadata"].get("deletionTimestamp"):
            raise ApiError(403, "Forbidden", "unable to create new content in namespace %s "
                           "because it is being terminated" % ns,
                           {"name": ns, "kind": "namespaces",
                            "causes": [{"reason": "NamespaceTerminating", "message":
                                        "namespace %s is being terminated" % ns,
                                        "field": "metadata.namespace"}]})

    def parse_object(self, rt, version, ns, name, body, apply=False):
        ct = self.headers.get("Content-Type", "").split(";")[0].strip()
        if not apply and ct not in ("", "application/json", "*/*"):
            # Protobuf (and CBOR) are not spoken here; client-go then falls back to JSON.
            raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an "
                           "unknown format - accepted media types include: application/json",
                           {})
        try:
            obj = json.loads(body or b"null")
        except ValueError as e:
            if apply:
                raise bad_request("error decoding YAML: this test server reads JSON only: %s" % e)
            raise bad_request("the body of the request was in an unknown format - accepted "
                              "media types include: application/json (%s)" % e)
        if not isinstance(obj, dict):
            raise bad_request("the body must be a JSON object (%s)" % ct)
        md = obj.get("metadata")
        if md is None:
            obj["metadata"] = md = {}
        if not isinstance(md, dict):
            raise bad_request("metadata must be an object")
        check_shape(rt, obj)
        want = rt.api_version(version)
        if apply:
            if not obj.get("apiVersion") or not obj.get("kind"):
                raise bad_request("invalid object type: %s, Kind=%s" % (
                    obj.get("apiVersion", ""), obj.get("kind", "")))
        if obj.get("apiVersion", want) != want:
            raise bad_request("the API version in the data (%s) does not match the expected API "
                              "version (%s)" % (obj.get("apiVersion"), want))
        if obj.get("kind", rt.kind) != rt.kind:
            raise bad_request("the kind in the data (%s) does not match the expected kind (%s)"
                              % (obj.get("kind"), rt.kind))
        obj["apiVersion"], obj["kind"] = want, rt.kind
        if name:
            if md.get("name", name) != name:
                raise bad_request("the name of the object (%s) does not match the name on the URL "
                                  "(%s)" % (md.get("name"), name))
            md["name"] = name
        if rt.namespaced and md.get("namespace", ns) != ns:
            raise bad_request("the namespace of the provided object does not match the namespace "
                              "sent on the request")
        if apply and md.get("managedFields"):
            raise bad_request("metadata.managedFields must be nil")
        if not md.get("name"):
            if md.get("generateName"):
                md["name"] = md["generateName"] + uuid.uuid4().hex[:5]
            else:
                raise invalid(rt, "", [("metadata.name", "Required value: name or generateName "
                                        "is required")])
        return obj

    def check_fields(self, rt, version, obj, apply=False):
        """fieldValidation: Strict refuses unknown fields (400), Warn (the default) and Ignore
        drop them, Warn with a Warning header for each."""
        mode = self.query.get("fieldValidation", "") or "Warn"
        if mode not in ("Ignore", "Warn", "Strict"):
            raise bad_request('fieldValidation parameter unsupported: "%s"' % mode)
        bad = unknown_fields(obj, type_schema(self.server.store, rt, version))
        if not bad:
            return
        if mode == "Strict":
            if apply:
                raise bad_request("failed to create typed patch object (%s/%s, Kind=%s): %s" % (
                    rt.group, version, rt.kind, "; ".join(
                        "%s: field not declared in schema" % field_path_text(p) for p in bad)))
            raise bad_request("strict decoding error: " + ", ".join(
                'unknown field "%s"' % field_path_text(p)[1:] for p in bad))
        for p in sorted(bad, key=len, reverse=True):
            drop_path(obj, p)
            if mode == "Warn":
                self.warnings.append('unknown field "%s"' % field_path_text(p)[1:])

    def int_param(self, name, default):
        """An integer query parameter; 400 when it is not one."""
        v = self.query.get(name, "")
        if v == "":
            return default
        try:
            return int(v)
        except ValueError:
            raise bad_request('invalid value for %s: "%s": not an integer' % (name, v))

    def manager(self, default=True):
        m = self.query.get("fieldManager", "")
        if not m and default:
            ua = self.headers.get("User-Agent", "")
            m = ua.split("/")[0] if ua else "unknown"
        return m

    def lookup(self, rt, ns, name):
        store = self.server.store
        obj = store.objects.get(store.key(rt, ns, name))
        if obj is None:
            raise not_found(rt, name)
        return obj

    # -- verbs --

    def get(self, rt, version, ns, name):
        store = self.server.store
        with store.lock:
            obj = self.lookup(rt, ns, name)
            return self.send_object(200, rt, version, obj)

    def send_object(self, code, rt, version, obj):
        o = self.out(rt, version, obj)
        accept = self.headers.get("Accept", "")
        if "as=Table" in accept:
            return self.send(code, self.table(rt, [o], o["metadata"].get("resourceVersion", "")),
                             "application/json;as=Table;v=v1;g=meta.k8s.io")
        if "as=PartialObjectMetadata" in accept and "as=PartialObjectMetadataList" not in accept:
            return self.send(code, {"kind": "PartialObjectMetadata",
                                    "apiVersion": "meta.k8s.io/v1", "metadata": o["metadata"]},
                             "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io")
        return self.send(code, o)

    def table(self, rt, objs, rv):
        """A meta.k8s.io/v1 Table (what `kubectl get` asks for): name and age columns."""
        cols = [{"name": "Name", "type": "string", "format": "name", "priority": 0,
                 "description": "Name must be unique within a namespace."},
                {"name": "Age", "type": "string", "format": "", "priority": 0,
                 "description": "CreationTimestamp of the object."}]
        rows = []
        include = self.query.get("includeObject", "Metadata")
        for o in objs:
            if include == "Object":
                ro = o
            elif include == "None":
                ro = None
            else:
                ro = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                      "metadata": o["metadata"]}
            rows.append({"cells": [o["metadata"]["name"], age(o)], "object": ro})
        return {"kind": "Table", "apiVersion": "meta.k8s.io/v1",
                "metadata": {"resourceVersion": rv}, "columnDefinitions": cols, "rows": rows}

    def matching(self, rt, ns):
        store = self.server.store
        lp = parse_label_selector(self.query.get("labelSelector", ""))
        fp = parse_field_selector(self.query.get("fieldSelector", ""))
        out = []
        for k in sorted(store.objects):
            if k[0] != rt.group or k[1] != rt.plural or (ns and k[2] != ns):
                continue
            if selected(store.objects[k], lp, fp):
                out.append((k, store.objects[k]))
        return out

    def list(self, rt, version, ns):
        store = self.server.store
        with store.lock:
            items = self.matching(rt, ns)
            rv = str(store.rv)
            cont = self.query.get("continue", "")
            if cont:
                try:
                    tok = json.loads(base64.urlsafe_b64decode(cont.encode()).decode())
                    after, rv = tuple(tok["after"]), tok["rv"]
                except (ValueError, KeyError, TypeError):
                    raise bad_request("continue key is not valid")
                items = [(k, o) for k, o in items if k > after]
            limit = self.int_param("limit", 0)
            meta = {"resourceVersion": rv}
            if limit > 0 and len(items) > limit:
                items = items[:limit]
                meta["continue"] = base64.urlsafe_b64encode(json.dumps(
                    {"after": list(items[-1][0]), "rv": rv}).encode()).decode()
                meta["remainingItemCount"] = len(self.matching(rt, ns)) - \
                    len([1 for k, _ in self.matching(rt, ns) if k <= items[-1][0]])
            objs = [self.out(rt, version, o) for _, o in items]
        accept = self.headers.get("Accept", "")
        if "as=Table" in accept:
            t = self.table(rt, objs, rv)
            if "continue" in meta:
                t["metadata"]["continue"] = meta["continue"]
            return self.send(200, t, "application/json;as=Table;v=v1;g=meta.k8s.io")
        if "as=PartialObjectMetadataList" in accept:
            return self.send(200, {"kind": "PartialObjectMetadataList",
                                   "apiVersion": "meta.k8s.io/v1", "metadata": meta,
                                   "items": [{"kind": "PartialObjectMetadata",
                                              "apiVersion": "meta.k8s.io/v1",
                                              "metadata": o["metadata"]} for o in objs]},
                             "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io")
        return self.send(200, {"kind": rt.kind + "List", "apiVersion": rt.api_version(version),
                               "metadata": meta, "items": objs})

    def watch(self, rt, version, ns):
        store = self.server.store
        lp = parse_label_selector(self.query.get("labelSelector", ""))
        fp = parse_field_selector(self.query.get("fieldSelector", ""))
        timeout = float(self.int_param("timeoutSeconds", 1800))
        m = re.fullmatch(r"(\d+)s", self.query.get("timeout", ""))
        if m:
            timeout = min(timeout, float(m.group(1)))
        deadline = time.time() + timeout
        bookmarks = self.query.get("allowWatchBookmarks") in ("true", "1")
        initial = self.query.get("sendInitialEvents") in ("true", "1")
        rv_param = self.query.get("resourceVersion", "")
        accept = self.headers.get("Accept", "")
        as_table = "as=Table" in accept
        pending = []
        fault = self.fault or {}
        if fault.get("watch_end_ms") is not None:
            deadline = min(deadline, time.time() + fault["watch_end_ms"] / 1000.0)
        with store.lock:
            epoch = store.epoch
            if fault.get("watch_expired"):
                pending.append(("ERROR", ApiError(
                    410, "Expired", "too old resource version: %s (%d)"
                    % (rv_param, store.rv)).status()))
                start, deadline = store.rv, 0
            elif rv_param in ("", "0") or initial:
                # Start from now, with the current objects as ADDED events.
                start = store.rv
                for _, o in self.matching(rt, ns):
                    pending.append(("ADDED", o))
                if initial and bookmarks:
                    pending.append(("BOOKMARK", {"metadata": {
                        "resourceVersion": str(start),
                        "annotations": {"k8s.io/initial-events-end": "true"}}}))
            else:
                try:
                    start = int(rv_param)
                except ValueError:
                    raise bad_request('invalid resource version "%s"' % rv_param)
                if start < store.floor:
                    # As a real server: the stream opens, with one ERROR event (410 Expired).
                    pending.append(("ERROR", ApiError(
                        410, "Expired", "too old resource version: %s (%d)"
                        % (rv_param, store.floor + 1)).status()))
                    start, deadline = store.rv, 0
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache, private")
        self.log_request(200)
        self.end_headers()
        self.status_sent = 200

        def write_event(etype, obj):
            if etype == "ERROR":
                o = obj
            elif etype == "BOOKMARK":
                o = {"kind": rt.kind, "apiVersion": rt.api_version(version)}
                o.update(jcopy(obj))
            else:
                o = self.out(rt, version, obj)
                if as_table:
                    o = self.table(rt, [o], o["metadata"].get("resourceVersion", ""))
            line = json.dumps({"type": etype, "object": o}).encode() + b"\n"
            self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
            self.wfile.flush()

        try:
            for etype, obj in pending:
                write_event(etype, obj)
            pos = 0
            last_bookmark = time.time()
            while True:
                batch = []
                with store.lock:
                    # Events after `start` for this resource (the history is ordered by rv).
                    h = store.history
                    lo, hi = 0, len(h)
                    while lo < hi:
                        mid = (lo + hi) // 2
                        if h[mid][0] <= start:
                            lo = mid + 1
                        else:
                            hi = mid
                    for ev in h[lo:]:
                        start = ev[0]
                        if ev[2] != rt.group or ev[3] != rt.plural or (ns and ev[4] != ns):
                            continue
                        etype, now_in = ev[1], selected(ev[5], lp, fp)
                        if etype == "MODIFIED" and ev[6] is not None and (lp or fp):
                            was_in = selected(ev[6], lp, fp)
                            if now_in and not was_in:
                                etype = "ADDED"
                            elif was_in and not now_in:
                                etype, now_in = "DELETED", True
                        if now_in:
                            batch.append((etype, ev[5]))
                    if not batch:
                        left = deadline - time.time()
                        if left <= 0 or self.server.stop.is_set() or self.client_gone() or \
                                store.epoch != epoch:
                            break
                        store.cond.wait(min(left, 0.5))
                for etype, obj in batch:
                    write_event(etype, obj)
                if bookmarks and time.time() - last_bookmark > 1.0 and not batch:
                    write_event("BOOKMARK", {"metadata": {"resourceVersion": str(start)}})
                    last_bookmark = time.time()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            self.close_connection = True

    def create(self, rt, version, ns, body):
        store = self.server.store
        dry = self.dry_run()
        obj = self.parse_object(rt, version, ns, "", body)
        self.check_fields(rt, version, obj)
        validate(rt, obj)
        with store.lock:
            self.check_namespace(rt, ns)
            k = store.key(rt, ns, obj["metadata"]["name"])
            if k in store.objects:
                raise ApiError(409, "AlreadyExists", '%s "%s" already exists'
                               % (rt.group_resource(), obj["metadata"]["name"]),
                               {"name": obj["metadata"]["name"], "group": rt.group,
                                "kind": rt.plural})
            obj = store.write_new(rt, ns, obj, self.manager(), "Update", "main", dry)
            self.after_write(rt, obj)
            return self.send_object(201, rt, version, obj)

    def update(self, rt, version, ns, name, part, body):
        store = self.server.store
        dry = self.dry_run()
        new = self.parse_object(rt, version, ns, name, body)
        self.check_fields(rt, version, new)
        validate(rt, new)
        with store.lock:
            old = store.objects.get(store.key(rt, ns, name))
            if old is None:
                self.check_namespace(rt, ns)
                if part == "status":
                    raise not_found(rt, name)
                new["metadata"].pop("resourceVersion", None)
                obj = store.write_new(rt, ns, new, self.manager(), "Update", "main", dry)
                self.after_write(rt, obj)
                return self.send_object(201, rt, version, obj)
            want_rv = new["metadata"].get("resourceVersion")
            if want_rv and want_rv != old["metadata"]["resourceVersion"]:
                raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": the '
                               "object has been modified; please apply your changes to the "
                               "latest version and try again" % (rt.group_resource(), name),
                               {"name": name, "group": rt.group, "kind": rt.plural})
            obj = self.store_update(rt, old, new, part, dry)
            return self.send_object(200, rt, version, obj)

    def store_update(self, rt, old, new, part, dry):
        """An Update operation: the parts this endpoint may change, then field ownership."""
        store = self.server.store
        new = jcopy(new)
        if rt.status and part == "main":
            if "status" in old:
                new["status"] = jcopy(old["status"])
            else:
                new.pop("status", None)
        elif part == "status":
            merged = jcopy(old)
            if "status" in new:
                merged["status"] = new["status"]
            else:
                merged.pop("status", None)
            new = merged
        apply_defaults(rt, new)
        sent = new["metadata"].get("managedFields")
        if not (sent and isinstance(sent, list) and all(
                isinstance(e, dict) and e.get("manager") and e.get("operation") in (
                    "Apply", "Update") for e in sent)):
            # The client did not set them (or not usably): the server keeps its own. A client
            # that sends changed managed fields replaces them (kubectl does so when it moves an
            # object from client-side to server-side apply).
            sent = old["metadata"].get("managedFields", [])
        new["metadata"]["managedFields"] = jcopy(sent)
        # The manager takes the fields whose value this write changed (or added).
        before = object_fields(old, part if rt.status else "all")
        after = object_fields(new, part if rt.status else "all")
        changed = {p for p in after if p not in before or get_at(old, p) != get_at(new, p)}
        mgr = self.manager()
        if changed:
            for e in new["metadata"]["managedFields"]:
                paths = from_fieldsv1(e.get("fieldsV1", {})) - changed
                e["fieldsV1"] = to_fieldsv1(paths)
            current = set()
            sub = "status" if part == "status" else ""
            for e in new["metadata"]["managedFields"]:
                if e["manager"] == mgr and e["operation"] == "Update" and \
                        e.get("subresource", "") == sub:
                    current = from_fieldsv1(e["fieldsV1"])
            set_manager(new, mgr, "Update", rt, part, current | changed)
        prune_managers(new)
        obj = store.replace(rt, old, new, dry)
        self.after_write(rt, obj)
        return obj

    def patch(self, rt, version, ns, name, part, body):
        ct = self.headers.get("Content-Type", "").split(";")[0].strip()
        if ct == "application/apply-patch+yaml":
            return self.apply(rt, version, ns, name, part, body)
        store = self.server.store
        dry = self.dry_run()
        try:
            patch = json.loads(body or b"null")
        except ValueError as e:
            raise bad_request("the body of the patch is no JSON: %s" % e)
        with store.lock:
            old = self.lookup(rt, ns, name)
            cur = self.out(rt, version, old)
            if ct == "application/json-patch+json":
                new = json_patch(cur, patch)
            elif ct == "application/merge-patch+json":
                if not isinstance(patch, dict):
                    raise bad_request("a merge patch must be a JSON object")
                new = merge_patch(cur, patch)
            elif ct == "application/strategic-merge-patch+json":
                if not isinstance(patch, dict):
                    raise bad_request("a strategic merge patch must be a JSON object")
                if rt.crd is not None:
                    raise ApiError(415, "UnsupportedMediaType", "the body of the request was in "
                                   "an unknown format - accepted media types include: "
                                   "application/json-patch+json, application/merge-patch+json, "
                                   "application/apply-patch+yaml", {})
                new = strategic_merge(cur, patch)
            else:
                raise ApiError(415, "UnsupportedMediaType", 'the body of the request was in an '
                               'unknown format - accepted media types include: '
                               'application/json-patch+json, application/merge-patch+json, '
                               'application/apply-patch+yaml', {})
            if not isinstance(new, dict):
                raise ApiError(422, "Invalid", "the server rejected our request due to an error "
                               "in our request: the patched object is no JSON object", {})
            check_shape(rt, new)
            new["apiVersion"], new["kind"] = cur["apiVersion"], cur["kind"]
            new.setdefault("metadata", {})["name"] = name
            pmd = patch.get("metadata") if isinstance(patch, dict) else None
            want_rv = pmd.get("resourceVersion") if isinstance(pmd, dict) else None
            if want_rv and want_rv != old["metadata"]["resourceVersion"]:
                raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": the '
                               "object has been modified; please apply your changes to the "
                               "latest version and try again" % (rt.group_resource(), name),
                               {"name": name, "group": rt.group, "kind": rt.plural})
            self.check_fields(rt, version, new)
            validate(rt, new)
            obj = self.store_update(rt, old, new, part, dry)
            return self.send_object(200, rt, version, obj)

    def apply(self, rt, version, ns, name, part, body):
        """Server-side apply: merge the applied configuration, with ownership per manager."""
        store = self.server.store
        dry = self.dry_run()
        mgr = self.manager(default=False)
        if not mgr:
            raise bad_request("PATCH %s: fieldManager is required for apply requests"
                              % self.url_path)
        force = self.query.get("force", "") in ("true", "1")
        applied = self.parse_object(rt, version, ns, name, body, apply=True)
        self.check_fields(rt, version, applied, apply=True)
        validate(rt, applied, whole=False)
        applied_md = applied["metadata"]
        for f in ("uid", "creationTimestamp", "generation"):
            applied_md.pop(f, None)
        new_set = object_fields(applied, part if rt.status else "all")
        sub = "status" if part == "status" else ""
        want_rv = applied_md.get("resourceVersion")
        with store.lock:
            old = store.objects.get(store.key(rt, ns, name))
            if want_rv and (old is None or old["metadata"]["resourceVersion"] != want_rv):
                # A resourceVersion in an apply configuration is a precondition.
                if old is None:
                    raise not_found(rt, name)
                raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": the '
                               "object has been modified; please apply your changes to the "
                               "latest version and try again" % (rt.group_resource(), name),
                               {"name": name, "group": rt.group, "kind": rt.plural})
            if old is None:
                if part == "status":
                    raise not_found(rt, name)
                self.check_namespace(rt, ns)
                validate(rt, applied)
                obj = jcopy(applied)
                obj["__applied_fields"] = new_set
                obj = store.write_new(rt, ns, obj, mgr, "Apply", "main", dry)
                self.after_write(rt, obj)
                return self.send_object(201, rt, version, obj)
            live = self.out(rt, version, old)
            entries = jcopy(live["metadata"].get("managedFields") or [])
            mine = set()
            others = []  # (entry, paths)
            for e in entries:
                paths = from_fieldsv1(e.get("fieldsV1", {}))
                if e["manager"] == mgr and e["operation"] == "Apply" and \
                        e.get("subresource", "") == sub:
                    mine = paths
                else:
                    others.append((e, paths))
            # Conflicts: a field another manager owns, which this apply sets to another value.
            conflicts = []
            for e, paths in others:
                for p in sorted(new_set & paths):
                    if p[-1].startswith("k:"):
                        continue
                    lv, av = get_at(live, p), get_at(applied, p)
                    if lv is not MISSING and lv != av:
                        conflicts.append((e, p))
            if conflicts and not force:
                raise conflict_error(rt, name, conflicts)
            for e, p in conflicts:
                for oe, paths in others:
                    if oe is e:
                        paths.discard(p)
            merged = jcopy(live)
            md_keep = jcopy(live["metadata"])
            applied_view = jcopy(applied)
            if rt.status and part == "main":
                applied_view.pop("status", None)
            elif part == "status":
                applied_view = {"status": applied.get("status", {})}
            merged = merge(merged, applied_view)
            merged["metadata"] = merge(md_keep, {k: v for k, v in applied_md.items()
                                                 if k in ("labels", "annotations", "finalizers",
                                                          "ownerReferences")})
            # Fields this manager applied before and no longer does: removed when no one else
            # owns them (or anything below them).
            owned_by_others = set()
            for _, paths in others:
                owned_by_others |= paths
            for p in sorted(mine - new_set, key=len, reverse=True):
                if any(q[:len(p)] == p for q in owned_by_others):
                    continue
                remove_at(merged, p)
            out_entries = []
            for e, paths in others:
                if paths:
                    e = dict(e, fieldsV1=to_fieldsv1(paths))
                    out_entries.append(e)
            merged["metadata"]["managedFields"] = out_entries
            set_manager(merged, mgr, "Apply", rt, part, new_set)
            prune_managers(merged)
            apply_defaults(rt, merged)
            validate(rt, merged)
            obj = store.replace(rt, old, merged, dry)
            self.after_write(rt, obj)
            return self.send_object(200, rt, version, obj)

    def after_write(self, rt, obj):
        """A stored CRD may change what is served (a dry run changes nothing)."""
        if rt.kind == "CustomResourceDefinition" and not self.dry_run():
            sync_crd(self.server.store, obj)

    def delete(self, rt, version, ns, name):
        store = self.server.store
        dry = self.dry_run()
        opts = {}
        body = None
        try:
            body = json.loads(self.req_body) if self.req_body else None
        except ValueError:
            body = None
        if isinstance(body, dict):
            opts = body
        pp = self.query.get("propagationPolicy") or opts.get("propagationPolicy") or "Background"
        if pp not in ("Background", "Foreground", "Orphan"):
            raise bad_request('propagationPolicy "%s" is not supported' % pp)
        pre = opts.get("preconditions") or {}
        with store.lock:
            obj = self.lookup(rt, ns, name)
            md = obj["metadata"]
            for f, label in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
                if pre.get(f) and pre[f] != md.get(f):
                    raise ApiError(409, "Conflict", "Operation cannot be fulfilled on %s \"%s\": "
                                   "Precondition failed: %s in precondition: %s, %s in object "
                                   "meta: %s" % (rt.group_resource(), name, label, pre[f], label,
                                                 md.get(f)),
                                   {"name": name, "group": rt.group, "kind": rt.plural})
            if rt.kind == "Namespace" and name in ("default", "kube-system", "kube-public"):
                raise ApiError(403, "Forbidden", 'namespaces "%s" is forbidden: this namespace '
                               "may not be deleted" % name, {"name": name, "kind": "namespaces"})
            if dry:
                return self.send_object(200, rt, version, obj)
            _, _, delete_delay, _ = store.behaviour(obj)
            k = store.key(rt, ns, name)
            if delete_delay > 0 or md.get("finalizers") or rt.kind == "Namespace":
                # A delete that takes time: the object is marked and goes later (after the
                # delay, once its finalizers are removed, a namespace with its objects).
                if not md.get("deletionTimestamp"):
                    if delete_delay > 0 or rt.kind == "Namespace":
                        store.deleting[k] = time.time() + delete_delay
                    new = jcopy(obj)
                    new["metadata"]["deletionTimestamp"] = now_rfc3339()
                    new["metadata"]["deletionGracePeriodSeconds"] = 0
                    if rt.kind == "Namespace":
                        new["status"] = {"phase": "Terminating"}
                    obj = store.replace(rt, obj, new)
                return self.send_object(200, rt, version, obj)
            store.delete(rt, obj)
            if pp == "Foreground" or rt.crd or rt.kind == "CustomResourceDefinition":
                return self.send_object(200, rt, version, obj)
            return self.send(200, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                   "status": "Success",
                                   "details": {"name": name, "group": rt.group, "kind": rt.plural,
                                               "uid": md["uid"]}})

    def delete_collection(self, rt, version, ns):
        store = self.server.store
        dry = self.dry_run()
        with store.lock:
            items = self.matching(rt, ns)
            if not dry:
                for _, o in items:
                    store.delete(rt, o)
            return self.send(200, {"kind": rt.kind + "List", "apiVersion": rt.api_version(version),
                                   "metadata": {"resourceVersion": str(store.rv)},
                                   "items": [self.out(rt, version, o) for _, o in items]})


def check_config(cfg):
    """Refuses a control configuration with unknown keys or values (400)."""
    def fail(msg):
        raise bad_request("bad test configuration: " + msg)
    if not isinstance(cfg, dict):
        fail("not a JSON object")
    for k in cfg:
        if k not in ("delay_ms", "behaviours", "faults"):
            fail("unknown key %r" % k)
    if not isinstance(cfg.get("delay_ms", 0), int):
        fail("delay_ms must be an integer")
    for b in cfg.get("behaviours", []):
        if not isinstance(b, dict):
            fail("a behaviour must be an object")
        for k, v in b.items():
            if k not in ("kind", "name", "namespace", "mode", "delay_ms", "delete_delay_ms",
                         "status"):
                fail("unknown behaviour key %r" % k)
        if b.get("mode", "ready") not in ("ready", "never", "fail"):
            fail("mode must be ready, never or fail")
        if not isinstance(b.get("status", {}), dict):
            fail("status must be an object")
    for f in cfg.get("faults", []):
        if not isinstance(f, dict):
            fail("a fault must be an object")
        for k in f:
            if k not in ("method", "path", "query", "count", "status", "reason", "retry_after",
                         "drop", "delay_ms", "forbidden", "message", "watch_end_ms",
                         "watch_expired", "hang", "exit"):
                fail("unknown fault key %r" % k)
        for key in ("path", "query"):
            try:
                re.compile(f.get(key, ""))
            except re.error as e:
                fail("bad %s regex %r: %s" % (key, f.get(key), e))


def age(o):
    ts = o["metadata"].get("creationTimestamp")
    try:
        t = datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.timezone.utc)
    except (TypeError, ValueError):
        return "<unknown>"
    s = int((datetime.datetime.now(datetime.timezone.utc) - t).total_seconds())
    return "%ds" % s if s < 120 else "%dm" % (s // 60)


def conflict_error(rt, name, conflicts):
    by_mgr = {}
    for e, p in conflicts:
        by_mgr.setdefault((e["manager"], e.get("apiVersion", "")), []).append(p)
    parts, causes = [], []
    for (m, av), paths in by_mgr.items():
        if len(paths) == 1:
            parts.append('conflict with "%s" using %s: %s' % (m, av, path_text(paths[0])))
        else:
            parts.append('conflicts with "%s" using %s:\n%s' % (
                m, av, "\n".join("- " + path_text(p) for p in paths)))
        for p in paths:
            causes.append({"reason": "FieldManagerConflict",
                           "message": 'conflict with "%s" using %s' % (m, av),
                           "field": path_text(p)})
    n = len(conflicts)
    msg = "Apply failed with %d conflict%s: %s" % (n, "" if n == 1 else "s", "\n".join(parts))
    return ApiError(409, "Conflict", msg, {"name": name, "group": rt.group, "kind": rt.plural,
                                           "causes": causes})


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return jcopy(patch)
    out = jcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


# Merge keys of lists that a strategic merge patch merges item by item (by field name).
SMP_KEYS = {"containers": "name", "initContainers": "name", "ephemeralContainers": "name",
            "env": "name", "volumes": "name", "volumeMounts": "mountPath",
            "imagePullSecrets": "name", "ownerReferences": "uid", "conditions": "type",
            "tolerations": None, "webhooks": "name"}


def strategic_merge(target, patch, field=None):
    """A strategic merge patch, simplified: maps merge as in a JSON merge patch; lists named in
    SMP_KEYS merge item by item on their key (items with "$patch": "delete" are removed);
    ports merge on containerPort (or port); other lists are replaced. The directives kubectl
    sends ($setElementOrder/..., $retainKeys, $deleteFromPrimitiveList/...) are honoured or
    dropped, never stored."""
    if isinstance(patch, dict):
        if patch.get("$patch") == "replace":
            return {k: v for k, v in patch.items() if not k.startswith("$")}
        if patch.get("$patch") == "delete":
            return None
        out = jcopy(target) if isinstance(target, dict) else {}
        for k, v in patch.items():
            if k.startswith("$deleteFromPrimitiveList/"):
                f = k.split("/", 1)[1]
                if isinstance(out.get(f), list):
                    out[f] = [x for x in out[f] if x not in v]
                continue
            if k.startswith("$"):
                continue
            if v is None:
                out.pop(k, None)
            else:
                merged = strategic_merge(out.get(k), v, k)
                if merged is None:
                    out.pop(k, None)
                else:
                    out[k] = merged
        return out
    if isinstance(patch, list) and isinstance(target, list):
        key = SMP_KEYS.get(field)
        if field == "ports":
            key = "containerPort" if any(isinstance(p, dict) and "containerPort" in p
                                         for p in patch + target) else "port"
        if key and all(isinstance(p, dict) and key in p for p in patch):
            out = jcopy(target)
            for p in patch:
                idx = next((i for i, t in enumerate(out)
                            if isinstance(t, dict) and t.get(key) == p[key]), None)
                if p.get("$patch") == "delete":
                    if idx is not None:
                        del out[idx]
                elif idx is None:
                    out.append({k: v for k, v in p.items() if not k.startswith("$")})
                else:
                    out[idx] = strategic_merge(out[idx], p)
            return out
    return jcopy(patch)


def json_patch(doc, ops):
    """RFC 6902 JSON patch (add, remove, replace, test); 422 when it does not apply."""
    try:
        return json_patch_ops(doc, ops)
    except (KeyError, IndexError, ValueError, TypeError, AttributeError) as e:
        raise ApiError(422, "Invalid", "the server rejected our request due to an error in our "
                       "request: %s" % e, {})


def json_patch_ops(doc, ops):
    doc = jcopy(doc)
    if not isinstance(ops, list):
        raise bad_request("a JSON patch must be a list of operations")
    for op in ops:
        ptr = [p.replace("~1", "/").replace("~0", "~") for p in op.get("path", "").split("/")[1:]]
        parent = doc
        for p in ptr[:-1]:
            parent = parent[int(p)] if isinstance(parent, list) else parent.get(p)
            if parent is None:
                raise ApiError(422, "Invalid", "the server rejected our request due to an error "
                               "in our request: path %s not found" % op.get("path"), {})
        last = ptr[-1] if ptr else None
        o = op.get("op")
        if o == "test":
            cur = parent[int(last)] if isinstance(parent, list) else parent.get(last)
            if cur != op.get("value"):
                raise ApiError(422, "Invalid", "the server rejected our request due to an error "
                               "in our request: test failed", {})
        elif o in ("add", "replace"):
            if isinstance(parent, list):
                if last == "-":
                    parent.append(op.get("value"))
                elif o == "add":
                    parent.insert(int(last), op.get("value"))
                else:
                    parent[int(last)] = op.get("value")
            else:
                parent[last] = op.get("value")
        elif o == "remove":
            if isinstance(parent, list):
                del parent[int(last)]
            else:
                parent.pop(last, None)
        else:
            raise bad_request("unsupported JSON patch operation %r" % o)
    return doc


def main():
    ap = argparse.ArgumentParser(description="a test Kubernetes API server")
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    ap.add_argument("--client-ca")
    ap.add_argument("--token", action="append", default=[])
    ap.add_argument("--basic")
    ap.add_argument("--legacy-discovery", action="store_true")
    ap.add_argument("--olm", action="store_true")
    ap.add_argument("--delay-ms", type=int, default=100)
    ap.add_argument("--control-port-file")
    args = ap.parse_args()
    if bool(args.tls_cert) != bool(args.tls_key):
        ap.error("--tls-cert and --tls-key go together")
    if args.client_ca and not args.tls_cert:
        ap.error("--client-ca needs --tls-cert")

    store = Store(args.olm, args.delay_ms)
    stop = threading.Event()
    server = Server(("127.0.0.1", args.port), args, store, stop)
    control = None
    if args.control_port_file:
        control = Server(("127.0.0.1", 0), args, store, stop, control_only=True)
        threading.Thread(target=control.serve_forever, args=(0.1,), daemon=True).start()
        write_port(args.control_port_file, control.server_address[1])
    ctl = threading.Thread(target=controller_loop, args=(store, stop), daemon=True)
    ctl.start()

    def on_term(signum, frame):
        stop.set()
        with store.lock:
            store.cond.notify_all()
        threading.Thread(target=server.shutdown, daemon=True).start()
        if control is not None:
            threading.Thread(target=control.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    write_port(args.port_file, server.server_address[1])
    try:
        server.serve_forever(poll_interval=0.1)
    finally:
        stop.set()
        server.server_close()


def write_port(path, port):
    """Writes the port through a temp file and a rename, so a reader never sees half of it."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
