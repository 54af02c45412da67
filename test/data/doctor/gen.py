#!/usr/bin/env python3
"""Writes the doctor fixtures (test/data/doctor/*.json): one healthy job and the
broken ones, each the objects `distenv-webhook doctor` reads, shaped as
kube-apiserver v1.36 returns them (Lists with apiVersion/kind/metadata, pods as
the StatefulSet controller, the kubelet and distenv made them; Istio pods as
Istio's injector shapes them: manifests/charts/istio-control/istio-discovery/
files/injection-template.yaml). Run it after changing a case; test_doctor reads
the files, and compares each one's report as text with NAME.txt beside it and as
-o json with NAME.json-out (`GOLDEN_UPDATE=1 build/test/test_doctor` rewrites
those: review the diff).
doctorKind and doctorName, when present, name the workload doctor is asked about
(a StatefulSet ddp otherwise). Keys: workload, pods, events, service, endpointslices, namespace,
networkpolicies, mutatingwebhookconfigurations, webhookendpointslices; a key
that is absent was not found (404); "unread:KEY" names one that was forbidden.
"""
import copy
import json
import os

NS = "ml"
HERE = os.path.dirname(os.path.abspath(__file__))
T0 = "2026-11-30T10:00:00Z"
DOMAIN = "ml.example"


def lst(kind, items, api="v1"):
    return {"apiVersion": api, "kind": kind + "List", "metadata": {"resourceVersion": "4242"}, "items": items}


def master(name="ddp", svc="ddp", port=29500):
    return f"{name}-0.{svc}.{NS}.svc.{DOMAIN}"


def env_for(rank, world, name="ddp", svc="ddp", port=29500):
    a = master(name, svc, port)
    return [
        {"name": "MASTER_ADDR", "value": a}, {"name": "MASTER_PORT", "value": str(port)},
        {"name": "RANK", "value": str(rank)}, {"name": "WORLD_SIZE", "value": str(world)},
        {"name": "NODE_RANK", "value": str(rank)}, {"name": "NNODES", "value": str(world)},
        {"name": "PET_MASTER_ADDR", "value": a}, {"name": "PET_MASTER_PORT", "value": str(port)},
        {"name": "PET_NNODES", "value": str(world)}, {"name": "PET_NODE_RANK", "value": str(rank)},
        {"name": "PET_NPROC_PER_NODE", "value": "1"},
    ]


def sts(replicas=3, name="ddp"):
    return {
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": NS, "uid": "6d1f2a3b-0000-4000-8000-00000000a001",
                     "resourceVersion": "4100", "generation": 1, "creationTimestamp": T0},
        "spec": {
            "replicas": replicas, "serviceName": name, "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name, "distenv.dev/inject": "true"}},
                "spec": {"containers": [{"name": "trainer", "image": "train:1", "resources": {},
                                         "imagePullPolicy": "Never"}],
                         "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
                         "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler"}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            "revisionHistoryLimit": 10,
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
        },
        "status": {"replicas": replicas, "availableReplicas": replicas, "readyReplicas": replicas,
                   "currentReplicas": replicas, "updatedReplicas": replicas, "observedGeneration": 1,
                   "currentRevision": f"{name}-7c9d8f6b5", "updateRevision": f"{name}-7c9d8f6b5",
                   "collisionCount": 0},
    }


def pod(i, world=3, name="ddp", ready=True, ip=None, extra_env=None, node="distenv-node"):
    pn = f"{name}-{i}"
    ip = ip or f"198.19.0.{20 + i}"
    env = env_for(i, world, name) + (extra_env or [])
    cond_status = "True" if ready else "False"
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": pn, "generateName": f"{name}-", "namespace": NS,
            "uid": f"0b7e5c1d-0000-4000-8000-00000000b00{i}", "resourceVersion": str(4200 + i),
            "creationTimestamp": T0,
            "labels": {"app": name, "distenv.dev/inject": "true", "apps.kubernetes.io/pod-index": str(i),
                       "controller-revision-hash": f"{name}-7c9d8f6b5",
                       "statefulset.kubernetes.io/pod-name": pn},
            "annotations": {"distenv.dev/injected": f"rank={i},world-size={world},master={master(name)}:29500"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": name,
                                 "uid": "6d1f2a3b-0000-4000-8000-00000000a001",
                                 "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": {
            "containers": [{"name": "trainer", "image": "train:1", "env": env, "resources": {},
                            "imagePullPolicy": "Never",
                            "terminationMessagePath": "/dev/termination-log",
                            "terminationMessagePolicy": "File"}],
            "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "nodeName": node,
            "hostname": pn, "subdomain": name, "schedulerName": "default-scheduler",
            "serviceAccountName": "default", "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority", "priority": 0,
            "terminationGracePeriodSeconds": 30,
        },
        "status": {
            "phase": "Running", "hostIP": "198.19.0.1", "podIP": ip, "podIPs": [{"ip": ip}],
            "qosClass": "BestEffort", "startTime": T0,
            "conditions": [
                {"type": "PodReadyToStartContainers", "status": "True", "lastTransitionTime": T0},
                {"type": "Initialized", "status": "True", "lastTransitionTime": T0},
                {"type": "Ready", "status": cond_status, "lastTransitionTime": T0},
                {"type": "ContainersReady", "status": cond_status, "lastTransitionTime": T0},
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": T0},
            ],
            "containerStatuses": [{
                "name": "trainer", "image": "docker.io/library/train:1",
                "imageID": "sha256:5f0c1f3e9b2a7d6c4e8f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d",
                "containerID": f"containerd://{i:064d}", "ready": ready, "restartCount": 0,
                "started": True, "state": {"running": {"startedAt": T0}}, "lastState": {}}],
        },
    }


def service(name="ddp", selector=None, headless=True, pnr=True):
    spec = {"selector": selector or {"app": name}, "ports": [{"name": "rdzv", "port": 29500, "protocol": "TCP",
                                                             "targetPort": 29500}],
            "type": "ClusterIP", "sessionAffinity": "None", "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack", "internalTrafficPolicy": "Cluster",
            "clusterIP": "None" if headless else "198.19.128.40",
            "clusterIPs": ["None" if headless else "198.19.128.40"]}
    if pnr:
        spec["publishNotReadyAddresses"] = True
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": NS, "uid": "1c2d3e4f-0000-4000-8000-00000000c001",
                         "resourceVersion": "4000", "creationTimestamp": T0},
            "spec": spec, "status": {"loadBalancer": {}}}


def slices(pods, svc="ddp", pnr=True):
    eps = []
    for p in pods:
        ready = any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"]["conditions"])
        eps.append({"addresses": [p["status"]["podIP"]], "hostname": p["spec"]["hostname"],
                    "nodeName": p["spec"].get("nodeName"),
                    "conditions": {"ready": ready or pnr, "serving": ready or pnr, "terminating": False},
                    "targetRef": {"kind": "Pod", "namespace": NS, "name": p["metadata"]["name"],
                                  "uid": p["metadata"]["uid"]}})
    if not pnr:
        eps = [e for e in eps if e["conditions"]["ready"]]
    return lst("EndpointSlice", [{
        "metadata": {"name": f"{svc}-x7k2p", "namespace": NS, "generateName": f"{svc}-",
                     "labels": {"kubernetes.io/service-name": svc,
                                "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"},
                     "uid": "2d3e4f50-0000-4000-8000-00000000d001", "resourceVersion": "4300"},
        "addressType": "IPv4", "endpoints": eps,
        "ports": [{"name": "rdzv", "port": 29500, "protocol": "TCP"}]}], api="discovery.k8s.io/v1")


def mwc(ca="LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJkakNDQVJ1Z0F3SUJBZ0lRCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K",
        excluded=("kube-system", "distenv-system")):
    cc = {"service": {"namespace": "distenv-system", "name": "distenv", "path": "/mutate", "port": 443}}
    if ca:
        cc["caBundle"] = ca
    return lst("MutatingWebhookConfiguration", [{
        "metadata": {"name": "distenv", "uid": "3e4f5061-0000-4000-8000-00000000e001",
                     "resourceVersion": "3000", "generation": 1,
                     "labels": {"app.kubernetes.io/name": "distenv", "app.kubernetes.io/managed-by": "Helm"}},
        "webhooks": [{"name": "pods.distenv.dev", "clientConfig": cc,
                      "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                                 "resources": ["pods"], "scope": "Namespaced"}],
                      "failurePolicy": "Fail", "matchPolicy": "Equivalent",
                      "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name",
                                                                  "operator": "NotIn",
                                                                  "values": list(excluded)}]},
                      "objectSelector": {"matchLabels": {"distenv.dev/inject": "true"}},
                      "sideEffects": "None", "timeoutSeconds": 10, "admissionReviewVersions": ["v1"],
                      "reinvocationPolicy": "IfNeeded"}]}], api="admissionregistration.k8s.io/v1")


def webhook_slices(ready=True):
    return lst("EndpointSlice", [{
        "metadata": {"name": "distenv-5fz9q", "namespace": "distenv-system",
                     "labels": {"kubernetes.io/service-name": "distenv"}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["198.19.0.11"], "conditions": {"ready": ready, "serving": ready,
                                                                    "terminating": False},
                       "targetRef": {"kind": "Pod", "namespace": "distenv-system",
                                     "name": "distenv-6c7d8-abcde"}}],
        "ports": [{"name": "https", "port": 8443, "protocol": "TCP"}]}], api="discovery.k8s.io/v1")


def namespace(labels=None):
    lab = {"kubernetes.io/metadata.name": NS}
    lab.update(labels or {})
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": NS, "uid": "4f506172-0000-4000-8000-00000000f001", "labels": lab,
                         "resourceVersion": "10", "creationTimestamp": T0},
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def event(on_kind, on_name, reason, message, etype="Warning", count=1, comp="statefulset-controller"):
    return {"metadata": {"name": f"{on_name}.18a3f0c2d1e4b5a6", "namespace": NS},
            "involvedObject": {"kind": on_kind, "namespace": NS, "name": on_name, "apiVersion": "apps/v1"},
            "reason": reason, "message": message, "source": {"component": comp},
            "firstTimestamp": T0, "lastTimestamp": "2026-11-30T10:01:00Z", "count": count, "type": etype,
            "reportingComponent": comp}


def healthy():
    pods = [pod(i) for i in range(3)]
    return {"workload": sts(), "pods": lst("Pod", pods), "events": lst("Event", []),
            "service": service(), "endpointslices": slices(pods), "namespace": namespace(),
            "networkpolicies": lst("NetworkPolicy", [], api="networking.k8s.io/v1"),
            "mutatingwebhookconfigurations": mwc(), "webhookendpointslices": webhook_slices()}


def istio(p, exclude_in=None):
    """p as Istio's injector (sidecar mode, no CNI) leaves it."""
    p = copy.deepcopy(p)
    a = p["metadata"]["annotations"]
    a["sidecar.istio.io/status"] = json.dumps({"initContainers": ["istio-init"], "containers": ["istio-proxy"],
                                               "volumes": ["workload-socket", "credential-socket",
                                                           "workload-certs", "istio-envoy", "istio-data",
                                                           "istio-podinfo", "istio-token", "istiod-ca-cert"],
                                               "imagePullSecrets": None, "revision": "default"},
                                              separators=(",", ":"))
    a["kubectl.kubernetes.io/default-container"] = "trainer"
    a["kubectl.kubernetes.io/default-logs-container"] = "trainer"
    a["prometheus.io/path"] = "/stats/prometheus"
    a["prometheus.io/port"] = "15020"
    a["prometheus.io/scrape"] = "true"
    p["metadata"]["labels"]["security.istio.io/tlsMode"] = "istio"
    p["metadata"]["labels"]["service.istio.io/canonical-name"] = "ddp"
    p["metadata"]["labels"]["service.istio.io/canonical-revision"] = "latest"
    d = "15090,15021,15020" + ("," + exclude_in if exclude_in else "")
    p["spec"]["initContainers"] = [{
        "name": "istio-init", "image": "docker.io/istio/proxyv2:1.28.0",
        "args": ["istio-iptables", "-p", "15001", "-z", "15006", "-u", "1337", "-m", "REDIRECT",
                 "-i", "*", "-x", "", "-b", "*", "-d", d, "--log_output_level=default:info"],
        "securityContext": {"allowPrivilegeEscalation": False, "privileged": False,
                            "capabilities": {"add": ["NET_ADMIN", "NET_RAW"], "drop": ["ALL"]},
                            "readOnlyRootFilesystem": False, "runAsGroup": 0, "runAsNonRoot": False,
                            "runAsUser": 0}}]
    p["spec"]["containers"].append({
        "name": "istio-proxy", "image": "docker.io/istio/proxyv2:1.28.0",
        "args": ["proxy", "sidecar", "--domain", "$(POD_NAMESPACE).svc.cluster.local",
                 "--proxyLogLevel=warning", "--proxyComponentLogLevel=misc:error", "--log_output_level=default:info"],
        "ports": [{"containerPort": 15090, "name": "http-envoy-prom", "protocol": "TCP"}],
        "readinessProbe": {"httpGet": {"path": "/healthz/ready", "port": 15021}, "periodSeconds": 15,
                           "timeoutSeconds": 3, "failureThreshold": 4}})
    return p


def denial(what, pod_name="ddp-0", count=1):
    """The StatefulSet controller's FailedCreate event for a pod distenv denied with what."""
    return event("StatefulSet", "ddp", "FailedCreate",
                 f'create Pod {pod_name} in StatefulSet ddp failed error: admission webhook '
                 f'"pods.distenv.dev" denied the request: distenv: {what}', count=count)


def sized(n, pods=None):
    """The healthy job made a StatefulSet of n replicas with these pods (each of world n)."""
    c = healthy()
    c["workload"] = sts(replicas=n)
    ps = pods if pods is not None else [pod(i, world=n) for i in range(n)]
    c["pods"] = lst("Pod", ps)
    c["endpointslices"] = slices(ps)
    return c


def cases():
    out = {"healthy": healthy()}

    c = healthy()
    del c["service"]
    c["endpointslices"] = lst("EndpointSlice", [], api="discovery.k8s.io/v1")
    out["service-missing"] = c

    c = healthy()
    c["service"] = service(selector={"app": "ddp-wrong"})
    c["endpointslices"] = lst("EndpointSlice", [], api="discovery.k8s.io/v1")
    out["service-selector"] = c

    c = healthy()
    c["service"] = service(headless=False)
    out["service-not-headless"] = c

    c = healthy()
    pods = [pod(0, ready=False), pod(1), pod(2)]
    c["pods"] = lst("Pod", pods)
    c["service"] = service(pnr=False)
    c["endpointslices"] = slices(pods, pnr=False)
    out["rank0-not-ready"] = c

    c = healthy()
    p0 = pod(0)
    p0["spec"].pop("nodeName")
    p0["status"] = {"phase": "Pending", "qosClass": "Burstable", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "lastTransitionTime": T0,
         "message": "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
                    "1 No preemption victims found for incoming pod."}]}
    c["pods"] = lst("Pod", [p0, pod(1), pod(2)])
    c["events"] = lst("Event", [event("Pod", "ddp-0", "FailedScheduling",
                                      "0/1 nodes are available: 1 Insufficient cpu.", comp="default-scheduler")])
    out["rank0-pending"] = c

    # a scheduler that says why only in its events: the pod's condition has no message
    c = healthy()
    p1 = pod(1)
    p1["spec"].pop("nodeName")
    p1["status"] = {"phase": "Pending", "qosClass": "BestEffort", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "lastTransitionTime": T0}]}
    c["pods"] = lst("Pod", [pod(0), p1, pod(2)])
    c["events"] = lst("Event", [event("Pod", "ddp-1", "FailedScheduling",
                                      "0/1 nodes are available: 1 node(s) didn't match Pod's node "
                                      "affinity/selector.", comp="default-scheduler")])
    out["pending-event-only"] = c

    c = healthy()
    c["workload"] = sts(replicas=4)
    c["pods"] = lst("Pod", [pod(i) for i in range(3)] + [pod(3, world=4)])
    out["scaled"] = c

    # one rank given another world: its master is not the others' (created while the
    # Service was named otherwise), the size the same
    c = healthy()
    p2 = pod(2)
    p2["metadata"]["annotations"]["distenv.dev/injected"] = (
        f"rank=2,world-size=3,master=ddp-0.ddp-old.{NS}.svc.{DOMAIN}:29500")
    c["pods"] = lst("Pod", [pod(0), pod(1), p2])
    out["split-master"] = c

    c = healthy()
    c["pods"] = lst("Pod", [pod(0), pod(1, extra_env=[{"name": "RANK", "value": "0"}]), pod(2)])
    # the user's RANK wins: distenv did not write its own, the pod has the user's only
    pl = c["pods"]["items"][1]["spec"]["containers"][0]["env"]
    c["pods"]["items"][1]["spec"]["containers"][0]["env"] = [e for e in pl if not (e["name"] == "RANK" and e["value"] == "1")]
    out["own-rank"] = c

    # RANK listed twice in the user's env: the kubelet keeps the last entry
    # (kubelet_pods.go makeEnvironmentVariables), so only that one is judged
    for name, own in (("own-rank-hidden", ["0", "1"]), ("own-rank-last", ["1", "0"])):
        c = healthy()
        p1 = pod(1, extra_env=[{"name": "RANK", "value": v} for v in own])
        pl = p1["spec"]["containers"][0]["env"]
        p1["spec"]["containers"][0]["env"] = [e for e in pl if e is not pl[2]]
        c["pods"] = lst("Pod", [pod(0), p1, pod(2)])
        out[name] = c

    # The same template since own RANKs are judged: rank 0's RANK=0 agrees (kept, none
    # added), ranks 1 and 2 are refused at creation and the controller says why.
    c = healthy()
    p0 = pod(0, extra_env=[{"name": "RANK", "value": "0"}])
    pl = p0["spec"]["containers"][0]["env"]
    p0["spec"]["containers"][0]["env"] = [e for e in pl if not (e["name"] == "RANK" and e is pl[2])]
    c["pods"] = lst("Pod", [p0])
    c["events"] = lst("Event", [event(
        "StatefulSet", "ddp", "FailedCreate",
        'create Pod ddp-2 in StatefulSet ddp failed error: admission webhook "pods.distenv.dev" denied the '
        'request: distenv: container trainer sets RANK=0, but this pod is rank 2 of StatefulSet ml/ddp '
        '(world size 3), so two pods would claim one rank: remove RANK from its env (distenv gives each '
        'pod its own)', count=7)])
    out["own-rank-denied"] = c

    c = healthy()
    c["networkpolicies"] = lst("NetworkPolicy", [{
        "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": "web-only", "namespace": NS, "uid": "5a6b7c8d-0000-4000-8000-000000000101",
                     "resourceVersion": "4050", "generation": 1},
        "spec": {"podSelector": {"matchLabels": {"app": "ddp"}}, "policyTypes": ["Ingress"],
                 "ingress": [{"ports": [{"protocol": "TCP", "port": 8080}]}]}}], api="networking.k8s.io/v1")
    out["netpol"] = c

    c = healthy()
    c["mutatingwebhookconfigurations"] = lst("MutatingWebhookConfiguration", [], api="admissionregistration.k8s.io/v1")
    del c["webhookendpointslices"]
    c["pods"] = lst("Pod", [])
    for p in healthy()["pods"]["items"]:
        q = copy.deepcopy(p)
        del q["metadata"]["annotations"]
        q["spec"]["containers"][0].pop("env")
        c["pods"]["items"].append(q)
    out["not-installed"] = c

    c = healthy()
    c["mutatingwebhookconfigurations"] = mwc(ca="")
    c["pods"] = lst("Pod", [])
    c["endpointslices"] = lst("EndpointSlice", [], api="discovery.k8s.io/v1")
    c["events"] = lst("Event", [event(
        "StatefulSet", "ddp", "FailedCreate",
        'create Pod ddp-0 in StatefulSet ddp failed error: Internal error occurred: failed calling webhook '
        '"pods.distenv.dev": failed to call webhook: Post "https://distenv.distenv-system.svc:443/mutate?timeout=10s": '
        'tls: failed to verify certificate: x509: certificate signed by unknown authority', count=12)])
    out["ca-missing"] = c

    c = healthy()
    c["webhookendpointslices"] = webhook_slices(ready=False)
    out["webhook-down"] = c

    c = healthy()
    c["pods"] = lst("Pod", [])
    c["endpointslices"] = lst("EndpointSlice", [], api="discovery.k8s.io/v1")
    c["events"] = lst("Event", [denial('distenv.dev/world-size "many" is not a whole number', count=5)])
    out["denied"] = c

    c = healthy()
    c["pods"] = lst("Pod", [istio(p) for p in healthy()["pods"]["items"]])
    c["namespace"] = namespace({"istio-injection": "enabled"})
    out["istio"] = c

    c = healthy()
    ps = []
    for p in healthy()["pods"]["items"]:
        q = istio(p, exclude_in="29500")
        q["metadata"]["annotations"]["traffic.sidecar.istio.io/excludeInboundPorts"] = "29500"
        q["metadata"]["annotations"]["traffic.sidecar.istio.io/excludeOutboundPorts"] = "29500"
        q["spec"]["initContainers"][0]["args"][-1:-1] = ["-o", "29500"]
        ps.append(q)
    c["pods"] = lst("Pod", ps)
    out["istio-excluded"] = c

    c = healthy()
    ps = [pod(i) for i in range(3)]
    for p in ps:
        p["spec"]["hostNetwork"] = True
        p["status"]["podIP"] = "198.19.0.1"
    c["pods"] = lst("Pod", ps)
    out["hostnetwork"] = c

    c = healthy()
    ps = [pod(i) for i in range(3)]
    ps[2]["status"]["containerStatuses"][0]["state"] = {"waiting": {
        "reason": "ImagePullBackOff", "message": 'Back-off pulling image "train:2": ErrImageNeverPull'}}
    ps[2]["status"]["containerStatuses"][0]["ready"] = False
    c["pods"] = lst("Pod", ps)
    out["image-pull"] = c

    c = healthy()
    ps = [pod(i) for i in range(3)]
    ps[1]["status"]["containerStatuses"][0]["restartCount"] = 2
    ps[1]["status"]["containerStatuses"][0]["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error",
                                                                          "startedAt": T0, "finishedAt": T0}}
    ps[2]["status"]["containerStatuses"][0]["imageID"] = "sha256:" + "9" * 64
    c["pods"] = lst("Pod", ps)
    out["out-of-step"] = c

    c = healthy()
    c["pods"] = lst("Pod", [pod(0), pod(2)])
    out["rank-missing"] = c

    # a StatefulSet controller before Kubernetes 1.28 writes no apps.kubernetes.io/pod-index
    # label: each rank is read from distenv's annotation alone, ranks 0 to 9 of ten
    c = healthy()
    c["workload"] = sts(replicas=10)
    ps = [pod(i, world=10) for i in range(10)]
    for p in ps:
        del p["metadata"]["labels"]["apps.kubernetes.io/pod-index"]
    c["pods"] = lst("Pod", ps)
    c["endpointslices"] = slices(ps)
    out["no-pod-index"] = c

    # -- the edges of the checks' lists and counts --

    # sixteen ranks missing: every one named, none "more"
    out["sixteen-missing"] = sized(17, [pod(0, world=17)])

    # a workload of 16,384 ranks (DOCTOR_MAX_PODS x 4, the most the ranks check counts), one pod
    out["world-16384"] = sized(16384, [pod(0, world=16384)])

    # one rank more than the ranks check counts
    out["world-16385"] = sized(16385, [pod(0, world=16385)])

    # a world-size on the template that is no number: the world is not known
    c = healthy()
    c["workload"]["spec"]["template"]["metadata"]["annotations"] = {"distenv.dev/world-size": "many"}
    out["world-size-bad"] = c

    # one pod (of three) without the opt-in label: made before the label was added
    c = healthy()
    ps = [pod(i) for i in range(3)]
    del ps[2]["metadata"]["labels"]["distenv.dev/inject"]
    del ps[2]["metadata"]["annotations"]
    ps[2]["spec"]["containers"][0].pop("env")
    c["pods"] = lst("Pod", ps)
    out["one-not-opted-in"] = c

    # a pod someone else made with the job's labels and rank 1's annotation
    c = healthy()
    extra = pod(1)
    extra["metadata"]["name"] = "ddp-1-debug"
    extra["metadata"].pop("generateName")
    extra["metadata"]["uid"] = "0b7e5c1d-0000-4000-8000-00000000b0d1"
    extra["metadata"]["ownerReferences"] = []
    extra["spec"]["hostname"] = "ddp-1-debug"
    c["pods"] = lst("Pod", [pod(0), pod(1), pod(2), extra])
    out["rank-twice"] = c

    # scaled from 3 to 2: ddp-2 (rank 2, at the new world's size) not yet deleted
    c = healthy()
    c["workload"] = sts(replicas=2)
    out["scaled-down"] = c

    # scaled to 0: the three pods terminating
    c = healthy()
    c["workload"] = sts(replicas=0)
    ps = [pod(i, ready=False) for i in range(3)]
    for p in ps:
        p["metadata"]["deletionTimestamp"] = "2026-11-30T10:05:00Z"
        p["metadata"]["deletionGracePeriodSeconds"] = 30
    c["pods"] = lst("Pod", ps)
    c["endpointslices"] = slices(ps)
    out["scaled-to-zero"] = c

    # a container still being created: waiting for a reason that keeps no rank down
    c = healthy()
    ps = [pod(i) for i in range(3)]
    ps[2]["status"]["containerStatuses"][0]["state"] = {"waiting": {"reason": "ContainerCreating"}}
    ps[2]["status"]["containerStatuses"][0]["ready"] = False
    ps[2]["status"]["containerStatuses"][0]["started"] = False
    c["pods"] = lst("Pod", ps)
    out["starting"] = c

    # an eviction in the namespace, of another workload's pod
    c = healthy()
    c["events"] = lst("Event", [event("Pod", "web-7d9f8-x2x4q", "Evicted",
                                      "The node was low on resource: memory.", comp="kubelet")])
    out["evicted-elsewhere"] = c

    # an old denial, since fixed: every rank has its pod
    c = healthy()
    c["events"] = lst("Event", [denial('distenv.dev/world-size "many" is not a whole number', count=3)])
    out["old-denial"] = c

    # two denials at the same second: the one listed last is quoted
    c = healthy()
    c["pods"] = lst("Pod", [])
    c["endpointslices"] = lst("EndpointSlice", [], api="discovery.k8s.io/v1")
    e1 = denial('distenv.dev/world-size "many" is not a whole number', count=2)
    e2 = denial('distenv.dev/port "http" is not a port', pod_name="ddp-1", count=2)
    e2["metadata"]["name"] = "ddp.18a3f0c2d1e4b5a7"
    c["events"] = lst("Event", [e1, e2])
    out["denied-twice"] = c

    # eight ranks whose container sets WORLD_SIZE to the GPUs (16), rank 0's included:
    # the user's value wins, distenv wrote none of its own
    c = sized(8)
    for p in c["pods"]["items"]:
        for e in p["spec"]["containers"][0]["env"]:
            if e["name"] == "WORLD_SIZE":
                e["value"] = "16"
    out["own-world-eight"] = c

    # elastic 2:4 at each end of its range
    for name, n in (("elastic-at-min", 2), ("elastic-at-max", 4)):
        c = sized(n)
        for p in c["pods"]["items"]:
            for e in p["spec"]["containers"][0]["env"]:
                if e["name"] == "PET_NNODES":
                    e["value"] = "2:4"
        out[name] = c

    # a world of one, distenv.dev/world-size "1" on the template
    c = sized(1)
    c["workload"]["spec"]["template"]["metadata"]["annotations"] = {"distenv.dev/world-size": "1"}
    out["world-one"] = c

    # an elastic job scaled to 0: its pods terminating
    c = healthy()
    c["workload"] = sts(replicas=0)
    ps = [pod(i, world=2, ready=False) for i in range(2)]
    for p in ps:
        p["metadata"]["deletionTimestamp"] = "2026-11-30T10:05:00Z"
        p["metadata"]["deletionGracePeriodSeconds"] = 30
        for e in p["spec"]["containers"][0]["env"]:
            if e["name"] == "PET_NNODES":
                e["value"] = "2:4"
    c["pods"] = lst("Pod", ps)
    c["endpointslices"] = slices(ps)
    out["elastic-scaled-to-zero"] = c

    # a LeaderWorkerSet of groups of 2 scaled from 2 groups to 1: group 1's leader (at the
    # new count of groups) not yet deleted; pods as the LeaderWorkerSet controller makes them
    # (sigs.k8s.io/lws v0.9.0: the leader StatefulSet lws, each group's workers lws-G)
    c = healthy()
    c["doctorKind"] = "LeaderWorkerSet"
    c["doctorName"] = "lws"
    c["workload"] = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
        "metadata": {"name": "lws", "namespace": NS, "uid": "6d1f2a3b-0000-4000-8000-00000000a101",
                     "resourceVersion": "4100", "generation": 2, "creationTimestamp": T0},
        "spec": {"replicas": 1, "startupPolicy": "LeaderCreated",
                 "rolloutStrategy": {"type": "RollingUpdate",
                                     "rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 0}},
                 "networkConfig": {"subdomainPolicy": "Shared"},
                 "leaderWorkerTemplate": {
                     "size": 2, "restartPolicy": "RecreateGroupOnPodRestart",
                     "workerTemplate": {"metadata": {"labels": {"distenv.dev/inject": "true"}},
                                        "spec": {"containers": [{"name": "trainer", "image": "train:1",
                                                                 "resources": {}}]}}}},
        "status": {"replicas": 1, "readyReplicas": 1, "updatedReplicas": 1,
                   "hpaPodSelector": "leaderworkerset.sigs.k8s.io/name=lws,leaderworkerset.sigs.k8s.io/worker-index=0"}}
    ps = []
    for g, r in ((0, 0), (0, 1), (1, 0)):
        pn = f"lws-{g}" if r == 0 else f"lws-{g}-{r}"
        p = pod(r, world=2, name="lws")
        p["metadata"]["name"] = pn
        p["metadata"]["generateName"] = "lws-" if r == 0 else f"lws-{g}-"
        p["metadata"]["uid"] = f"0b7e5c1d-0000-4000-8000-0000000c0{g}{r}"
        p["metadata"]["labels"] = {
            "distenv.dev/inject": "true", "leaderworkerset.sigs.k8s.io/name": "lws",
            "leaderworkerset.sigs.k8s.io/group-index": str(g),
            "leaderworkerset.sigs.k8s.io/worker-index": str(r),
            "leaderworkerset.sigs.k8s.io/group-key": f"{g}5f3a9c2e7b1d4a6c8e0f2b4d6a8c0e{g}",
            "leaderworkerset.sigs.k8s.io/template-revision-hash": "7d9c5b6f8",
            "apps.kubernetes.io/pod-index": str(g if r == 0 else r),
            "statefulset.kubernetes.io/pod-name": pn}
        p["metadata"]["annotations"] = {
            "leaderworkerset.sigs.k8s.io/size": "2",
            "distenv.dev/injected": f"rank={r},world-size=2,master=lws-{g}.lws.{NS}.svc.{DOMAIN}:29500"}
        if r:
            p["metadata"]["annotations"]["leaderworkerset.sigs.k8s.io/leader-name"] = f"lws-{g}"
        p["metadata"]["ownerReferences"] = [{
            "apiVersion": "apps/v1", "kind": "StatefulSet", "name": "lws" if r == 0 else f"lws-{g}",
            "uid": "6d1f2a3b-0000-4000-8000-00000000a102", "controller": True, "blockOwnerDeletion": True}]
        p["spec"]["hostname"] = pn
        p["spec"]["subdomain"] = "lws"
        for e in p["spec"]["containers"][0]["env"]:
            if e["name"] in ("MASTER_ADDR", "PET_MASTER_ADDR"):
                e["value"] = f"lws-{g}.lws.{NS}.svc.{DOMAIN}"
        ps.append(p)
    c["pods"] = lst("Pod", ps)
    c["service"] = service(name="lws", selector={"leaderworkerset.sigs.k8s.io/name": "lws"})
    c["endpointslices"] = slices(ps, svc="lws")
    out["lws-scaled-down"] = c

    # six pods with Istio's sidecar: every one named, none "more"
    c = sized(6, [istio(pod(i, world=6)) for i in range(6)])
    c["namespace"] = namespace({"istio-injection": "enabled"})
    out["istio-six"] = c

    # a NetworkPolicy that drops the rendezvous port, with 65 pods: the sources it is
    # judged for are the first 64
    c = sized(65)
    c["networkpolicies"] = out["netpol"]["networkpolicies"]
    out["netpol-65"] = c

    c = healthy()
    c["unread:pods"] = 'forbidden: you may not list pods in namespace ml (HTTP 403: pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "ml")'
    c["unread:mutatingwebhookconfigurations"] = 'forbidden: you may not list mutatingwebhookconfigurations.admissionregistration.k8s.io (cluster-wide) (HTTP 403)'
    out["forbidden"] = c
    return out


if __name__ == "__main__":
    for name, c in cases().items():
        with open(os.path.join(HERE, name + ".json"), "w") as f:
            json.dump(c, f, indent=1, sort_keys=True)
            f.write("\n")
