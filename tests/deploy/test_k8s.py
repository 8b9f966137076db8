#!/usr/bin/env python3
"""deploy/k8s: the manifests validated, the kustomizations composed, and gpuvet-k8s-check run
for real against a stand-in API server.

    test_k8s.py GPUVET OUTDIR [FAKE_NVML]

- every manifest validates with kubernetes-validate --strict (unknown fields rejected) for
  each Kubernetes version of KUBERNETES_VERSIONS, and a manifest with an unknown field is
  refused (the linter is not a no-op);
- the ServiceMonitor (a custom resource kubernetes-validate skips) validates against the
  openAPIV3Schema of the Prometheus Operator's CRD, pinned in tests/deploy/crd/ (v0.93.0),
  with unknown fields refused as `kubectl --validate=strict` refuses them, and a typo is
  refused;
- every kustomization names files that exist, and every manifest is reachable from an entry
  point (the check `.`, `sweep`, `serve`) or the optional `serve/servicemonitor` component,
  and nothing else is a root; every container's image is `gpuvet`, the name the image
  component rewrites; with kubectl (its built-in kustomize) or kustomize on PATH, every entry
  point is rendered (serve also with its ServiceMonitor), the renders validated and the
  image seen rewritten;
- the RBAC is get and patch on nodes only; the DaemonSet and the sweep Job run the same
  container with the same mounts; they select nvidia.com/gpu.present=true, take the node
  name from spec.nodeName, tolerate the script's own taint; the Containerfile installs the
  script the manifests run and gpuvet's .deb;
- the exporter: its DaemonSet selects the nodes the check does, through the nvidia runtime
  class, non-root with a read-only root and no capability, within resource limits; its
  selector, ports, probes and the Service (headless, annotated for discovery) and the
  ServiceMonitor agree by name and number; its --check-report is the file the check
  DaemonSet keeps on the same hostPath; its --hostname is the node's name from the downward
  API; and its container's command and args, $(VAR)s expanded from its env, run with the
  real gpuvet on the fake NVML (FAKE_NVML; port and report path moved): the probes' paths
  answer 200, every series' Hostname is the node's, the report kept by gpuvet-k8s-check is
  exported (gpuvet_check_report_up 1);
- shellcheck on the script;
- gpuvet-k8s-check with the real gpuvet judging fixtures (pass: dgx-h100, warn: cloud-x8,
  fail: dgx-h100-degraded) against tests/fakes/fake_kube_api.py over HTTPS with a token:
  the label, the annotations, the taint added on fail (GPUVET_TAINT=true) and removed on
  pass and warn, left alone on a gpuvet error (bad arguments, exit 2) and on a hung gpuvet
  (killed at GPUVET_CHECK_TIMEOUT), the last good report kept through both;
  a foreign taint, label and annotation kept throughout;
  a conflicting write between the read and the patch (409) re-read and kept; no taint
  without GPUVET_TAINT; API errors (bad token, unknown node, no server) exit 1 naming the
  node; bad configuration exits 2 naming the variable; a checking loop ends at SIGTERM.
Skips (exit 77) without curl, jq, openssl, shellcheck or PyYAML; the validation part (the
script's cases still run first) without kubernetes-validate (tools/run-tests.sh installs it,
with jsonschema, which the CRD validation uses)."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import check, finish  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fakes"))
import fakeenv  # noqa: E402
from fake_kube_api import FakeKubeAPI  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_process import Served, listen_port  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
import fixture_cache  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
K8S = os.path.join(REPO, "deploy", "k8s")
SCRIPT = os.path.join(K8S, "gpuvet-k8s-check")
PCI_IDS = os.path.join(REPO, "tests", "fixtures", "pci.ids")
# The versions the manifests must be valid for: the newest kubernetes-validate 1.37.0
# knows and the oldest of the three minor releases Kubernetes supported when it came out.
KUBERNETES_VERSIONS = ("1.35.0", "1.37.0")
LABEL = "gpuvet.io/check"
OURS = {"key": "gpuvet.io/check", "value": "fail", "effect": "NoSchedule"}
FOREIGN = {"key": "dedicated", "value": "training", "effect": "NoSchedule"}
TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
# What a user applies (kubectl apply -k DIR), and the optional component no entry point
# includes by default: every kustomization is one of these or reached from one.
ENTRY_POINTS = {".", "sweep", "serve"}
OPTIONAL_COMPONENTS = {"serve/servicemonitor"}
# The Prometheus Operator's ServiceMonitor CRD, as released (tests/deploy/crd/SOURCES.md).
SERVICEMONITOR_CRD = os.path.join(HERE, "crd", "monitoring.coreos.com_servicemonitors.yaml")
CRD_GROUPS = ("monitoring.coreos.com/",)
NODE = "gpu-node-1"


def load_yaml(path):
    import yaml
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def manifests():
    """Every YAML file under deploy/k8s that is not a kustomization (relative paths)."""
    found = []
    for dirpath, _, files in os.walk(K8S):
        for name in files:
            if name.endswith(".yaml") and name != "kustomization.yaml":
                found.append(os.path.relpath(os.path.join(dirpath, name), K8S))
    return sorted(found)


def kustomizations():
    return sorted(os.path.relpath(os.path.join(d, "kustomization.yaml"), K8S)
                  for d, _, files in os.walk(K8S) if "kustomization.yaml" in files)


def pod_spec(doc):
    return doc["spec"]["template"]["spec"]


def core_manifests():
    """The manifests of Kubernetes' own kinds (kubernetes-validate skips custom resources)."""
    return [m for m in manifests()
            if not any(d.get("apiVersion", "").startswith(CRD_GROUPS) for d in load_yaml(os.path.join(K8S, m)))]


def strict(schema):
    """The CRD's schema refusing unknown fields, as the API server does with
    fieldValidation=Strict (kubectl --validate=strict), where it says nothing else."""
    if isinstance(schema, dict):
        if "properties" in schema and "additionalProperties" not in schema \
                and not schema.get("x-kubernetes-preserve-unknown-fields"):
            schema["additionalProperties"] = False
        for v in schema.values():
            strict(v)
    elif isinstance(schema, list):
        for v in schema:
            strict(v)
    return schema


def servicemonitor_validator():
    import jsonschema
    (crd,) = load_yaml(SERVICEMONITOR_CRD)
    (v1,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    return jsonschema.Draft7Validator(strict(v1["schema"]["openAPIV3Schema"]))


def validate_servicemonitor(doc, what):
    errors = ["%s: %s" % ("/".join(str(p) for p in e.absolute_path), e.message)
              for e in servicemonitor_validator().iter_errors(doc)]
    check(doc["apiVersion"] == "monitoring.coreos.com/v1" and doc["kind"] == "ServiceMonitor" and not errors,
          "%s: valid against the ServiceMonitor CRD's schema (prometheus-operator 0.93.0, unknown fields refused)%s"
          % (what, "".join("\n  " + e for e in errors)))


def crd_validation():
    """ServiceMonitor against its CRD; False without jsonschema."""
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        return False
    (doc,) = load_yaml(os.path.join(K8S, "serve", "servicemonitor", "servicemonitor.yaml"))
    validate_servicemonitor(doc, "serve/servicemonitor/servicemonitor.yaml")
    bogus = json.loads(json.dumps(doc))
    bogus["spec"]["endpoints"][0]["intervall"] = "15s"
    errors = [e.message for e in servicemonitor_validator().iter_errors(bogus)]
    check(any("intervall" in e for e in errors), "a ServiceMonitor with an unknown field (intervall) is refused")
    return True


def validate(validator, paths, what):
    for version in KUBERNETES_VERSIONS:
        p = subprocess.run([validator, "--strict", "--no-warn", "-k", version] + paths, capture_output=True, text=True)
        if not check(p.returncode == 0, "%s: valid for Kubernetes %s (kubernetes-validate --strict)" % (what, version)):
            print(p.stdout[-3000:], p.stderr[-2000:])


def validation(outdir):
    validator = shutil.which("kubernetes-validate")
    if not validator:
        return False
    validate(validator, [os.path.join(K8S, m) for m in core_manifests()],
             "every manifest of Kubernetes' kinds (%s)" % ", ".join(core_manifests()))
    # The linter in strict mode refuses what Kubernetes would not know.
    bogus = os.path.join(outdir, "bogus-daemonset.yaml")
    with open(os.path.join(K8S, "daemonset.yaml")) as f:
        text = f.read().replace("      serviceAccountName: gpuvet-check\n",
                                "      serviceAccountName: gpuvet-check\n      serviceAcountName: typo\n")
    with open(bogus, "w") as f:
        f.write(text)
    p = subprocess.run([validator, "--strict", "-k", KUBERNETES_VERSIONS[-1], bogus], capture_output=True, text=True)
    check(p.returncode != 0 and "serviceAcountName" in p.stdout + p.stderr,
          "a DaemonSet with an unknown field (serviceAcountName) is refused")
    render(validator, outdir)
    return True


def render(validator, outdir):
    """The kustomizations rendered by the real kustomize, when this machine has one."""
    kubectl, kustomize = shutil.which("kubectl"), shutil.which("kustomize")
    if kustomize:
        build = [kustomize, "build"]
    elif kubectl and subprocess.run([kubectl, "kustomize", "--help"], capture_output=True).returncode == 0:
        build = [kubectl, "kustomize"]
    else:
        print("note: no kustomize or kubectl on PATH: the kustomizations are checked file by file only")
        return
    # serve with its optional ServiceMonitor, as a user's kustomization would add it.
    monitored = os.path.join(outdir, "serve-monitored")
    os.makedirs(monitored)
    with open(os.path.join(monitored, "kustomization.yaml"), "w") as f:
        serve = os.path.relpath(os.path.join(K8S, "serve"), monitored)
        f.write("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\n"
                "components:\n  - %s/servicemonitor\n" % (serve, serve))
    for entry, kinds in ((".", {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "DaemonSet"}),
                         ("sweep", {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Job"}),
                         ("serve", {"Namespace", "DaemonSet", "Service"}),
                         (monitored, {"Namespace", "DaemonSet", "Service", "ServiceMonitor"})):
        p = subprocess.run(build + [os.path.join(K8S, entry)], capture_output=True, text=True,
                           timeout=120 * fakeenv.time_scale())
        entry = os.path.basename(entry)
        if not check(p.returncode == 0, "%s %s: renders" % (" ".join(os.path.basename(b) for b in build), entry)):
            print(p.stderr[-2000:])
            continue
        out = os.path.join(outdir, "rendered-%s.yaml" % ("main" if entry == "." else entry))
        with open(out, "w") as f:
            f.write(p.stdout)
        docs = load_yaml(out)
        check({d["kind"] for d in docs} == kinds and len(docs) == len(kinds),
              "%s renders %s" % (entry, ", ".join(sorted(kinds))))
        images = [c["image"] for d in docs if d["kind"] in ("DaemonSet", "Job") for c in pod_spec(d)["containers"]]
        check(images == ["registry.invalid/gpuvet:0.1.0"], "%s: the image component sets the image (%s)" % (entry, images))
        validate(validator, [out], "%s rendered" % entry)
        for d in docs:
            if d["kind"] == "ServiceMonitor":
                validate_servicemonitor(d, "%s rendered: the ServiceMonitor" % entry)


def structure():
    docs = {m: load_yaml(os.path.join(K8S, m)) for m in manifests()}
    # Each kustomization's directory: the directories and files it names.
    graph = {}
    for k in kustomizations():
        kdir = os.path.dirname(k) or "."
        (doc,) = load_yaml(os.path.join(K8S, k))
        dirs, files = set(), set()
        for entry in doc.get("resources", []) + doc.get("components", []):
            path = os.path.normpath(os.path.join(K8S, kdir, entry))
            if not check(os.path.exists(path), "%s lists %s, which exists" % (k, entry)):
                continue
            (files if os.path.isfile(path) else dirs).add(os.path.relpath(path, K8S))
        graph[kdir] = (dirs, files)
        if k == "image/kustomization.yaml":
            check(doc.get("kind") == "Component" and [i.get("name") for i in doc.get("images", [])] == ["gpuvet"],
                  "%s: a component that rewrites the image gpuvet" % k)
    roots = set(graph) - set().union(*(dirs for dirs, _ in graph.values()))
    check(roots == ENTRY_POINTS | OPTIONAL_COMPONENTS, "the kustomizations no other includes are the entry points %s "
          "and the optional %s: %s" % (sorted(ENTRY_POINTS), sorted(OPTIONAL_COMPONENTS), sorted(roots)))
    reached, todo = set(), list(roots)
    while todo:
        d = todo.pop()
        if d in reached or d not in graph:
            continue
        reached.add(d)
        todo.extend(graph[d][0])
    reachable = set().union(*(graph[d][1] for d in reached))
    check(sorted(reachable) == manifests(), "every manifest under deploy/k8s is reached from an entry point or the "
          "optional component (not reached: %s)" % sorted(set(manifests()) - reachable))

    serve_ds = serve_structure(docs)
    (ds,) = docs["daemonset.yaml"]
    (job,) = docs["sweep/job.yaml"]
    for doc in (ds, job):
        for c in pod_spec(doc)["containers"]:
            check(c["image"] == "gpuvet" and c["command"] == ["gpuvet-k8s-check"],
                  "%s runs gpuvet-k8s-check from the image gpuvet" % doc["kind"])
    rbac = {d["kind"]: d for d in docs["base/rbac.yaml"]}
    check(rbac["ClusterRole"]["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}],
          "ClusterRole: get and patch on nodes, nothing else")
    binding = rbac["ClusterRoleBinding"]
    check(binding["roleRef"]["name"] == rbac["ClusterRole"]["metadata"]["name"]
          and binding["subjects"] == [{"kind": "ServiceAccount", "name": rbac["ServiceAccount"]["metadata"]["name"],
                                       "namespace": rbac["ServiceAccount"]["metadata"]["namespace"]}]
          and pod_spec(ds)["serviceAccountName"] == rbac["ServiceAccount"]["metadata"]["name"],
          "the binding gives the role to the pods' service account")

    spec = pod_spec(ds)
    env = {e["name"]: e for e in spec["containers"][0]["env"]}
    check(env["NODE_NAME"].get("valueFrom") == {"fieldRef": {"fieldPath": "spec.nodeName"}},
          "NODE_NAME from the downward API (spec.nodeName)")
    check(spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
          == [{"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}]}],
          "the DaemonSet runs on nvidia.com/gpu.present=true nodes")
    check({"key": OURS["key"], "operator": "Exists", "effect": "NoSchedule"} in spec["tolerations"],
          "the pods tolerate the taint they set (to lift it)")
    mounts = {m["name"]: m for m in spec["containers"][0]["volumeMounts"]}
    volumes = {v["name"]: v for v in spec["volumes"]}
    check(volumes["host-root"]["hostPath"]["path"] == "/" and mounts["host-root"]["readOnly"] is True
          and mounts["host-root"]["mountPath"] == env["GPUVET_HOST_ROOT"]["value"],
          "the host's / is mounted read-only where GPUVET_HOST_ROOT says")
    check(spec["runtimeClassName"] == "nvidia" and env["NVIDIA_VISIBLE_DEVICES"]["value"] == "all"
          and "limits" in spec["containers"][0]["resources"]
          and "nvidia.com/gpu" not in json.dumps(spec["containers"][0]["resources"]),
          "NVML through the nvidia runtime class and NVIDIA_VISIBLE_DEVICES=all, no GPU taken from the device plugin")
    check(env["GPUVET_CHECK_INTERVAL"]["value"] != "0", "the DaemonSet checks on a schedule")
    # The Job's pod is the DaemonSet's, checked once, one per node.
    jspec = json.loads(json.dumps(pod_spec(job)))
    jenv = {e["name"]: e for e in jspec["containers"][0]["env"]}
    check(jenv.pop("GPUVET_CHECK_INTERVAL")["value"] == "0" and jspec.pop("restartPolicy") == "Never"
          and jspec["affinity"].pop("podAntiAffinity")["requiredDuringSchedulingIgnoredDuringExecution"][0]["topologyKey"]
          == "kubernetes.io/hostname", "the sweep checks once, one pod per node")
    denv = dict(env)
    denv.pop("GPUVET_CHECK_INTERVAL")
    jspec["containers"][0].pop("env")
    dspec = json.loads(json.dumps(spec))
    dspec["containers"][0].pop("env")
    check(jspec == dspec and jenv == denv, "the sweep's pod is the DaemonSet's otherwise")

    with open(os.path.join(K8S, "Containerfile")) as f:
        containerfile = re.sub(r"\\\n\s*", " ", f.read())  # continuation lines joined
    check("COPY deploy/k8s/gpuvet-k8s-check /usr/local/bin/gpuvet-k8s-check" in containerfile
          and re.search(r"apt-get install .*\./gpuvet\.deb", containerfile) is not None
          and re.search(r"^FROM debian:bookworm", containerfile, re.M) is not None,
          "the Containerfile installs gpuvet's .deb on Debian 12 and the script the manifests run")

    p = subprocess.run(["shellcheck", SCRIPT], capture_output=True, text=True)
    if not check(p.returncode == 0, "shellcheck gpuvet-k8s-check: clean"):
        print(p.stdout[-3000:])
    return serve_ds


def container_env(container):
    return {e["name"]: e for e in container.get("env", [])}


def expand(arg, values):
    """Kubernetes' $(VAR) expansion in a container's command and args."""
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: values.get(m.group(1), m.group(0)), arg)


def option(args, name):
    """The value of --name=VALUE or --name VALUE in args, or None."""
    for i, a in enumerate(args):
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
        if a == name and i + 1 < len(args):
            return args[i + 1]
    return None


def serve_structure(docs):
    """The exporter's DaemonSet, Service and ServiceMonitor agree with each other and with the
    check DaemonSet."""
    (ds,) = docs["serve/daemonset.yaml"]
    (svc,) = docs["serve/service.yaml"]
    (smon,) = docs["serve/servicemonitor/servicemonitor.yaml"]
    (check_ds,) = docs["daemonset.yaml"]
    spec = pod_spec(ds)
    (c,) = spec["containers"]
    args = c["args"]
    check(c["image"] == "gpuvet" and c["command"] == ["gpuvet"] and args[0] == "serve",
          "the exporter's container runs gpuvet serve from the image gpuvet")
    labels = ds["spec"]["template"]["metadata"]["labels"]
    check(ds["spec"]["selector"]["matchLabels"].items() <= labels.items(), "the exporter's selector matches its pods")
    check(spec["affinity"] == pod_spec(check_ds)["affinity"] and spec["runtimeClassName"] == "nvidia"
          and {"key": OURS["key"], "operator": "Exists", "effect": "NoSchedule"} in spec["tolerations"],
          "the exporter runs where the check does (nvidia.com/gpu.present=true, also tainted by it), through the "
          "nvidia runtime class")
    env = container_env(c)
    res = c["resources"]
    check(env["NVIDIA_VISIBLE_DEVICES"]["value"] == "all" and "nvidia.com/gpu" not in json.dumps(res)
          and {"cpu", "memory"} <= set(res["requests"]) and {"cpu", "memory"} <= set(res["limits"]),
          "the exporter sees every GPU without taking one, within CPU and memory limits")
    sc, psc = c["securityContext"], spec["securityContext"]
    check(psc.get("runAsNonRoot") is True and psc.get("runAsUser", 0) != 0 and sc["readOnlyRootFilesystem"] is True
          and sc["allowPrivilegeEscalation"] is False and sc["capabilities"] == {"drop": ["ALL"]}
          and spec.get("automountServiceAccountToken") is False,
          "the exporter runs as a user other than root, read-only, with no capability and no API token")
    ports = {p["name"]: p for p in c["ports"]}
    check(ports.get("metrics", {}).get("containerPort") == listen_port(args) == 9400,
          "the container port named metrics is 9400, where --listen listens")
    for probe, path in (("startupProbe", "/health"), ("livenessProbe", "/health"), ("readinessProbe", "/metrics")):
        get = c[probe]["httpGet"]
        check(get["path"] == path and get["port"] in ports, "%s: GET %s on the port %s" % (probe, path, get["port"]))
    startup = c["startupProbe"]
    check(startup["periodSeconds"] * startup["failureThreshold"] >= 40,
          "the startup probe waits for the first round (nvmlInit's 20 s and a GPU's 20 s deadline)")
    check(option(args, "--hostname") == "$(NODE_NAME)"
          and env["NODE_NAME"].get("valueFrom") == {"fieldRef": {"fieldPath": "spec.nodeName"}},
          "--hostname is the node's name (NODE_NAME from spec.nodeName)")
    report = option(args, "--check-report")
    mount = {m["mountPath"]: m for m in c["volumeMounts"]}.get(os.path.dirname(report or ""))
    volumes = {v["name"]: v for v in spec["volumes"]}
    cspec = pod_spec(check_ds)
    (cc,) = cspec["containers"]
    cvolumes = {v["name"]: v for v in cspec["volumes"]}
    kept_in = [cvolumes[m["name"]].get("hostPath", {}).get("path") for m in cc["volumeMounts"]
               if m["mountPath"] == container_env(cc)["GPUVET_REPORT_DIR"]["value"]]
    with open(SCRIPT) as f:
        script = f.read()
    check(mount is not None and mount.get("readOnly") is True and os.path.basename(report) == "gpuvet-check.json"
          and 'report="$report_dir/gpuvet-check.json"' in script
          and kept_in == [volumes[mount["name"]]["hostPath"]["path"]],
          "--check-report %s: read-only, the report gpuvet-check.json the check DaemonSet keeps in GPUVET_REPORT_DIR, "
          "on the same hostPath (%s)" % (report, kept_in))
    check(svc["spec"]["selector"].items() <= labels.items() and svc["spec"].get("clusterIP") == "None"
          and svc["metadata"]["namespace"] == ds["metadata"]["namespace"],
          "a headless Service selects the exporter's pods (one endpoint per node)")
    (port,) = svc["spec"]["ports"]
    check(port["name"] == "metrics" and port["targetPort"] in ports
          and port["port"] == ports["metrics"]["containerPort"],
          "the Service's port metrics is the container's")
    check(svc["metadata"]["annotations"] == {"prometheus.io/scrape": "true", "prometheus.io/port": str(port["port"]),
                                             "prometheus.io/path": "/metrics"},
          "the Service is annotated for discovery: scrape, its port, /metrics")
    check(smon["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()
          and smon["spec"]["namespaceSelector"]["matchNames"] == [svc["metadata"]["namespace"]]
          and [(e["port"], e["path"]) for e in smon["spec"]["endpoints"]] == [(port["name"], "/metrics")],
          "the ServiceMonitor selects the Service and scrapes its port metrics by name")
    return ds


def serve_beside_check(outdir, gpuvet, fake_nvml, fixtures, ds):
    """The check pod's script keeps its report in a directory standing for the node's
    hostPath; the exporter's command and args, as the kubelet would expand them, run on the
    fake NVML with that directory where the pod mounts it."""
    host_dir = os.path.join(outdir, "node-var-lib-gpuvet")
    os.makedirs(host_dir)
    c = Cluster(os.path.join(outdir, "beside"), gpuvet, fixtures)
    try:
        c.api.add_node(NODE)
        p = c.run("dgx-h100-degraded", GPUVET_REPORT_DIR=host_dir)
        check(p.returncode == 0 and os.listdir(host_dir) == ["gpuvet-check.json"],
              "the check pod keeps its report, and only it, on the node: %s" % os.listdir(host_dir))
    finally:
        c.api.close()
    with open(os.path.join(host_dir, "gpuvet-check.json")) as f:
        report = json.load(f)
    (container,) = pod_spec(ds)["containers"]
    values = {"NODE_NAME": NODE}
    values.update({n: e["value"] for n, e in container_env(container).items() if "value" in e})
    argv = [expand(a, values) for a in container["command"] + container["args"]]
    mount_path = os.path.dirname(option(argv, "--check-report"))
    at_mount = re.compile("^(--check-report=)?" + re.escape(mount_path) + "/")
    argv = [at_mount.sub(lambda m: (m.group(1) or "") + host_dir + "/", a) for a in argv]
    try:
        served = Served(gpuvet, fake_nvml, argv)
    except RuntimeError as e:
        check(False, "the exporter's command line runs: %s" % e)
        return
    try:
        print("the exporter's command line: " + " ".join(served.argv))
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            get = container[probe]["httpGet"]
            status, _ = served.get(get["path"])
            check(ports[get["port"]] == listen_port(container["args"]) and status == 200,
                  "%s: GET %s answers %d while healthy" % (probe, get["path"], status))
        _, body = served.wait_for("/metrics", lambda st, b: "gpuvet_check_report_up 1" in b)
        hosts = set(re.findall(r'Hostname="([^"]*)"', body))
        check(hosts == {NODE}, "every series' Hostname is the node's name from the downward API: %s" % sorted(hosts))
        failing = {c["id"] for c in report["checks"] if c["status"] == "fail"}
        exported = set(re.findall(r'^gpuvet_check_status\{id="([^"]+)",status="fail"\} 1$', body, re.M))
        check("gpuvet_check_report_up 1" in body and failing and exported == failing,
              "the check pod's report is exported: %s fail" % ", ".join(sorted(exported)))
    finally:
        rc = served.stop()
    check(rc == 0, "the exporter exits 0 on SIGTERM (%s)" % rc)


class Cluster:
    """The stand-in API server, its certificate, the pod's service-account files."""

    def __init__(self, outdir, gpuvet, fixtures):
        self.outdir, self.gpuvet, self.fixtures = outdir, gpuvet, fixtures
        self.sa = os.path.join(outdir, "serviceaccount")
        os.makedirs(self.sa, exist_ok=True)
        key, cert = os.path.join(outdir, "api.key"), os.path.join(self.sa, "ca.crt")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                        "-days", "2", "-subj", "/CN=kubernetes", "-addext", "subjectAltName=IP:127.0.0.1"],
                       check=True, capture_output=True)
        with open(os.path.join(self.sa, "token"), "w") as f:
            f.write("gpuvet-test-token")
        self.api = FakeKubeAPI(cert, key, "gpuvet-test-token")
        self.bin = os.path.join(outdir, "bin")
        os.makedirs(self.bin, exist_ok=True)

    def env(self, fixture, **extra):
        env = dict(os.environ, NODE_NAME="gpu-node-1", GPUVET_HOST_ROOT=os.path.join(self.fixtures, fixture),
                   GPUVET_BIN=self.gpuvet, GPUVET_K8S_SA_DIR=self.sa, GPUVET_REPORT_DIR=self.outdir,
                   KUBERNETES_SERVICE_HOST="127.0.0.1", KUBERNETES_SERVICE_PORT=str(self.api.port),
                   GPUVET_PCI_IDS=PCI_IDS, GPUVET_API_TIMEOUT=str(int(10 * fakeenv.time_scale())))
        env.update(extra)
        return env

    def run(self, fixture, **extra):
        return subprocess.run([SCRIPT], env=self.env(fixture, **extra), capture_output=True, text=True,
                              timeout=120 * fakeenv.time_scale())

    def fake_gpuvet(self, name, body):
        path = os.path.join(self.bin, name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body + "\n")
        os.chmod(path, 0o755)
        return path


def published(c, p, verdict, what):
    node = c.api.node("gpu-node-1")
    meta = node["metadata"]
    ok = check(p.returncode == 0 and meta["labels"].get(LABEL) == verdict
               and TIME_RE.match(meta["annotations"].get("gpuvet.io/check-time", "")) is not None,
               "%s: exit 0, %s=%s, a check time (rc %d: %s)" % (what, LABEL, verdict, p.returncode, p.stderr[-400:]))
    if not ok:
        print(p.stdout[-1500:])
    return node


def script_cases(c):
    api = c.api
    foreign_meta = {"labels": {"nvidia.com/gpu.present": "true", "team": "ml"}}

    # pass, on a node that has no taint at all.
    api.add_node("gpu-node-1", labels=foreign_meta["labels"])
    p = c.run("dgx-h100")
    node = published(c, p, "pass", "pass")
    check(node["metadata"]["annotations"].get("gpuvet.io/check-summary")
          == "gpuvet check: 110 pass, 0 warn, 0 fail, 0 error", "pass: the summary annotation gives the counts")
    check("taints" not in node["spec"] and node["metadata"]["labels"]["team"] == "ml"
          and node["metadata"]["annotations"]["node.alpha.kubernetes.io/ttl"] == "0",
          "pass: no taint added; the node's other labels and annotations kept")
    patches = [r for r in api.requests if r[0] == "PATCH"]
    check(len(patches) == 1 and set(patches[0][3]) == {"metadata"}
          and set(patches[0][3]["metadata"]["labels"]) == {LABEL}
          and set(patches[0][3]["metadata"]["annotations"]) == {"gpuvet.io/check-time", "gpuvet.io/check-summary"}
          and patches[0][2] == "application/merge-patch+json",
          "pass: one merge patch naming only the script's label and annotations (and the resourceVersion)")
    check(os.path.exists(os.path.join(c.outdir, "gpuvet-check.json")), "the JSON report is kept in GPUVET_REPORT_DIR")

    # fail with tainting on, on a node with a taint of someone else's.
    api.add_node("gpu-node-1", labels=foreign_meta["labels"], taints=[FOREIGN])
    p = c.run("dgx-h100-degraded", GPUVET_TAINT="true")
    node = published(c, p, "fail", "fail")
    check(node["spec"]["taints"] == [FOREIGN, OURS], "fail: NoSchedule taint added, the foreign one kept: %s"
          % node["spec"].get("taints"))
    check("gpuvet check: 104 pass, 3 warn, 3 fail, 0 error" == node["metadata"]["annotations"]["gpuvet.io/check-summary"],
          "fail: the summary gives the counts")

    # warn: the node is usable, the taint goes; the foreign one stays.
    p = c.run("cloud-x8", GPUVET_TAINT="true")
    node = published(c, p, "warn", "warn after fail")
    check(node["spec"]["taints"] == [FOREIGN], "warn: the script's taint removed, the foreign one kept: %s"
          % node["spec"].get("taints"))

    # gpuvet error (bad arguments, exit 2): label error, a taint of ours left as it is.
    api.add_node("gpu-node-1", labels=foreign_meta["labels"], taints=[OURS, FOREIGN])
    kept = os.path.join(c.outdir, "gpuvet-check.json")
    with open(kept, "rb") as f:
        last_good = f.read()
    p = c.run("dgx-h100", GPUVET_TAINT="true", GPUVET_CHECK_ARGS="--level bogus")
    node = published(c, p, "error", "gpuvet exits 2")
    check(node["spec"]["taints"] == [OURS, FOREIGN], "error: the taints are left as they were: %s"
          % node["spec"].get("taints"))
    check("gpuvet check exited 2" in node["metadata"]["annotations"]["gpuvet.io/check-summary"],
          "error: the summary says how gpuvet ended: " + node["metadata"]["annotations"]["gpuvet.io/check-summary"])
    check(all("spec" not in r[3] for r in api.requests if r[0] == "PATCH"), "error: the patch does not touch the taints")

    # A hung gpuvet is killed at GPUVET_CHECK_TIMEOUT: error.
    hung = c.fake_gpuvet("gpuvet-hangs", "sleep 60")
    start = time.monotonic()
    p = c.run("dgx-h100", GPUVET_BIN=hung, GPUVET_CHECK_TIMEOUT="1")
    took = time.monotonic() - start
    node = published(c, p, "error", "hung gpuvet")
    check(took < 10 * fakeenv.time_scale(), "hung gpuvet: killed on time (%.1f s)" % took)
    check("did not finish within 1s" in node["metadata"]["annotations"]["gpuvet.io/check-summary"],
          "hung gpuvet: the summary names the timeout")
    with open(kept, "rb") as f:
        check(f.read() == last_good and not os.path.exists(kept + ".new"),
              "gpuvet exiting 2, then hung: the last good report is kept as it was, no partial one beside it")

    # pass with tainting off still lifts a taint of ours (turning tainting off cleans up).
    p = c.run("dgx-h100")
    node = published(c, p, "pass", "pass after error, GPUVET_TAINT unset")
    check(node["spec"]["taints"] == [FOREIGN], "pass: the script's taint removed, the foreign one kept")

    # fail with tainting off: labelled, not tainted.
    api.add_node("gpu-node-1", taints=[])
    p = c.run("dgx-h100-degraded")
    node = published(c, p, "fail", "fail, GPUVET_TAINT unset")
    check(node["spec"]["taints"] == [], "fail without GPUVET_TAINT: no taint")

    # Someone taints the node between the script's read and its patch: 409, read again.
    api.add_node("gpu-node-1", taints=[])
    api.before_patch = lambda node: node["spec"].setdefault("taints", []).append(FOREIGN)
    p = c.run("dgx-h100-degraded", GPUVET_TAINT="true")
    node = published(c, p, "fail", "conflict")
    check(node["spec"]["taints"] == [FOREIGN, OURS], "conflict: the concurrent taint kept, ours added: %s"
          % node["spec"].get("taints"))
    check([r[0] for r in api.requests] == ["GET", "PATCH", "GET", "PATCH"], "conflict: 409, then read and patched again")

    # The API refuses or is not there: exit 1 naming the node.
    with open(os.path.join(c.sa, "token"), "w") as f:
        f.write("stale-token")
    p = c.run("dgx-h100")
    check(p.returncode == 1 and "gpu-node-1: HTTP 401" in p.stderr, "a refused token: exit 1, HTTP 401 named: %s"
          % p.stderr[-300:])
    with open(os.path.join(c.sa, "token"), "w") as f:
        f.write("gpuvet-test-token")
    p = c.run("dgx-h100", NODE_NAME="gpu-node-2")
    check(p.returncode == 1 and "reading node gpu-node-2: HTTP 404" in p.stderr, "an unknown node: exit 1, HTTP 404")
    closed = c.api.port
    api.close()
    p = c.run("dgx-h100", KUBERNETES_SERVICE_PORT=str(closed))
    check(p.returncode == 1 and "reading node gpu-node-1: HTTP 000" in p.stderr, "no API server: exit 1: %s"
          % p.stderr[-300:])

    # Bad configuration: exit 2 naming the variable, before gpuvet runs.
    for var, value, words in (("NODE_NAME", "", "NODE_NAME is not set"),
                              ("GPUVET_TAINT", "yes", 'GPUVET_TAINT must be true or false, not "yes"'),
                              ("GPUVET_CHECK_INTERVAL", "1h", 'GPUVET_CHECK_INTERVAL must be a whole number'),
                              ("GPUVET_HOST_ROOT", "/nonexistent", "GPUVET_HOST_ROOT /nonexistent is not a directory"),
                              ("GPUVET_K8S_SA_DIR", "/nonexistent", "cannot read /nonexistent/token")):
        report = os.path.join(c.outdir, "gpuvet-check.json")
        if os.path.exists(report):
            os.unlink(report)
        p = c.run("dgx-h100", **{var: value})
        check(p.returncode == 2 and words in p.stderr and not os.path.exists(report),
              "%s=%r: exit 2: %s" % (var, value, p.stderr.strip()[-200:]))


def loop_ends_at_sigterm(c):
    """GPUVET_CHECK_INTERVAL: checks, sleeps; SIGTERM ends the wait at once."""
    c2 = Cluster(os.path.join(c.outdir, "loop"), c.gpuvet, c.fixtures)
    try:
        c2.api.add_node("gpu-node-1")
        proc = subprocess.Popen([SCRIPT], env=c2.env("dgx-h100", GPUVET_CHECK_INTERVAL="3600"),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60 * fakeenv.time_scale()
        while time.monotonic() < deadline and "PATCH" not in [r[0] for r in c2.api.requests]:
            time.sleep(0.1)
        check(c2.api.node("gpu-node-1")["metadata"]["labels"].get(LABEL) == "pass",
              "GPUVET_CHECK_INTERVAL=3600: the first check is published")
        time.sleep(0.3)
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=5 * fakeenv.time_scale())
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        check(proc.returncode == 143 and time.monotonic() - start < 5 * fakeenv.time_scale(),
              "the loop ends at SIGTERM while it waits (rc %s, %.1f s)" % (proc.returncode, time.monotonic() - start))
    finally:
        c2.api.close()


def main():
    if len(sys.argv) != 4:
        print("usage: test_k8s.py GPUVET OUTDIR FAKE_NVML", file=sys.stderr)
        return 2
    gpuvet, outdir, fake_nvml = (os.path.abspath(a) for a in sys.argv[1:4])
    missing = [t for t in ("curl", "jq", "openssl", "shellcheck", "timeout") if not shutil.which(t)]
    try:
        import yaml  # noqa: F401
    except ImportError:
        missing.append("PyYAML (python3-yaml)")
    if missing:
        print("SKIP: needs %s (tools/bootstrap.sh installs them)" % ", ".join(missing))
        return 77
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    fixtures = fixture_cache.ensure("dgx-h100", "dgx-h100-degraded", "cloud-x8")
    ds = structure()
    serve_beside_check(outdir, gpuvet, fake_nvml, fixtures, ds)
    c = Cluster(os.path.join(outdir, "api"), gpuvet, fixtures)
    try:
        script_cases(c)
    finally:
        c.api.close()
    loop_ends_at_sigterm(c)
    with tempfile.TemporaryDirectory() as tmp:
        validated = validation(tmp) and crd_validation()
    if finish():
        return 1
    if not validated:
        print("SKIP: kubernetes-validate (tools/run-tests.sh installs it) or jsonschema (python3-jsonschema) not "
              "installed: the manifests were not all validated against their schemas")
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
