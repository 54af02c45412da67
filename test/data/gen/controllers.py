#!/usr/bin/env python3
"""Writes the JobSet, LeaderWorkerSet and launcher golden requests of test/data/.

Each pod is built the way its controllers build it, from their sources:
- JobSet v0.12.0, pkg/controllers/jobset_controller.go (constructJob,
  labelAndAnnotateObject, GetSubdomain, CoordinatorEndpoint) and
  pkg/util/placement (GenJobName): Job <js>-<rjob>-<j>, the jobset.sigs.k8s.io/*
  labels and annotations on the pod template, spec.subdomain = the JobSet's
  network subdomain or its name; then the Job controller (indexed_job_utils.go):
  the completion index as annotation and label, hostname <job>-<i>,
  generateName <job>-<i>-, the JOB_COMPLETION_INDEX fieldRef.
- LeaderWorkerSet v0.9.0, pkg/controllers/leaderworkerset_controller.go (leader
  StatefulSet <lws>, template labels name + worker-index 0, annotation size) and
  pod_controller.go (worker StatefulSet <lws>-<g>, ordinals from 1, labels name,
  group-index, group-key, annotations size and leader-name); then the
  StatefulSet controller (stateful_set_utils.go): name, pod-index label,
  hostname, subdomain = serviceName. The labels LWS's own pod webhook adds
  (group-index on leaders, worker-index on workers) are left out: distenv may be
  called before it.
- StatefulSet v1.36 (stateful_set_utils.go newVersionedStatefulSetPod): name
  <sts>-<ordinal>, labels pod-index, pod-name and controller-revision-hash,
  hostname, subdomain = serviceName; the Job controller as above for plain
  Indexed Jobs. The launcher cases (sts-gpu1, sts-gpu8, ...) vary what decides
  LOCAL_RANK (GPU limits, distenv.dev/nproc-per-node, a container's own
  LOCAL_RANK) and the frameworks xgboost and paddle.

Usage: python3 test/data/gen/controllers.py  (rewrites the *.request.json and
*.lookup.json files it owns; the responses come from `GOLDEN_UPDATE=1
build/test/test_golden` and are reviewed by hand).
"""
import copy
import hashlib
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.dirname(HERE)
NS = "ml"
JS_UID = "3b8f0c2e-5a1d-4e7f-9c6b-0a2d4e6f8a10"


def review(uid, obj, username):
    return {
        "kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1",
        "request": {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "requestKind": {"group": "", "version": "v1", "kind": "Pod"},
            "requestResource": {"group": "", "version": "v1", "resource": "pods"},
            "namespace": NS, "operation": "CREATE",
            "userInfo": {"username": username},
            "object": obj, "oldObject": None, "dryRun": False,
            "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"},
        },
    }


def container():
    return {"name": "trainer", "image": "train:1.0", "resources": {},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}


def jobset_pod(js, rjobs, rjob, j, i, coordinator=None):
    job = f"{js}-{rjob}-{j}"
    global_index = sum(r for n, r, _ in rjobs[:[n for n, _, _ in rjobs].index(rjob)]) + j
    reps = dict((n, r) for n, r, _ in rjobs)[rjob]
    marks = {
        "jobset.sigs.k8s.io/jobset-name": js,
        "jobset.sigs.k8s.io/jobset-uid": JS_UID,
        "jobset.sigs.k8s.io/replicatedjob-name": rjob,
        "jobset.sigs.k8s.io/restart-attempt": "0",
        "jobset.sigs.k8s.io/replicatedjob-replicas": str(reps),
        "jobset.sigs.k8s.io/global-replicas": str(sum(r for _, r, _ in rjobs)),
        "jobset.sigs.k8s.io/job-index": str(j),
        "jobset.sigs.k8s.io/job-key": "5c1f0e9a7b3d2c4e6f8a0b1c3d5e7f9a1b2c3d4e",
        "jobset.sigs.k8s.io/job-global-index": str(global_index),
        "jobset.sigs.k8s.io/group-name": "default",
        "jobset.sigs.k8s.io/group-replicas": str(sum(r for _, r, _ in rjobs)),
        "jobset.sigs.k8s.io/job-group-index": str(global_index),
    }
    if coordinator:
        marks["jobset.sigs.k8s.io/coordinator"] = coordinator
    job_uid = "9e1d2c3b-4a5f-4e6d-8c7b-%012d" % (global_index + 1)
    return job_pod(job, i, job_uid, marks, subdomain=js)


def jobset_object(js, rjobs, coordinator=None):
    spec = {"replicatedJobs": [
        {"name": n, "replicas": r, "template": {"spec": {
            "completions": p, "parallelism": p, "completionMode": "Indexed",
            "backoffLimit": 0, "template": {"metadata": {"labels": {"distenv.dev/inject": "true"}},
                                            "spec": {"containers": [container()]}}}}}
        for n, r, p in rjobs],
        "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
        "successPolicy": {"operator": "All"}, "startupPolicy": {"startupPolicyOrder": "AnyOrder"}}
    if coordinator:
        spec["coordinator"] = coordinator
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": js, "namespace": NS, "uid": JS_UID}, "spec": spec}


def lws_pod(lws, g, i, size, policy=None):
    if i == 0:
        name, owner = f"{lws}-{g}", lws
        labels = {"leaderworkerset.sigs.k8s.io/name": lws,
                  "leaderworkerset.sigs.k8s.io/worker-index": "0"}
        annotations = {"leaderworkerset.sigs.k8s.io/size": str(size)}
        if policy:
            annotations["leaderworkerset.sigs.k8s.io/subdomainPolicy"] = policy
        ordinal, service = g, lws
    else:
        name, owner = f"{lws}-{g}-{i}", f"{lws}-{g}"
        labels = {"leaderworkerset.sigs.k8s.io/name": lws,
                  "leaderworkerset.sigs.k8s.io/group-index": str(g),
                  "leaderworkerset.sigs.k8s.io/group-key": "7f3e9a1c5b2d4e6f8a0c1e3b5d7f9a2c4e6b8d0f",
                  "leaderworkerset.sigs.k8s.io/template-revision-hash": "6d8f7c9b5"}
        annotations = {"leaderworkerset.sigs.k8s.io/size": str(size),
                       "leaderworkerset.sigs.k8s.io/leader-name": f"{lws}-{g}"}
        ordinal = i
        service = f"{lws}-{g}" if policy == "UniquePerReplica" else lws
    labels.update({"distenv.dev/inject": "true", "apps.kubernetes.io/pod-index": str(ordinal),
                   "statefulset.kubernetes.io/pod-name": name,
                   "controller-revision-hash": f"{owner}-5b7c9d8f6"})
    return {
        "metadata": {"name": name, "namespace": NS, "labels": labels, "annotations": annotations,
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet",
                                          "name": owner,
                                          "uid": "4c2e6a8b-1d3f-4a5c-9e7b-%012d" % (g * 10 + (i > 0)),
                                          "controller": True, "blockOwnerDeletion": True}]},
        "spec": {"containers": [container()], "restartPolicy": "Always",
                 "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                 "hostname": name, "subdomain": service, "schedulerName": "default-scheduler"},
        "status": {},
    }


def sts_pod(sts, ordinal, annotations=None, limits=None, env=None, service=None):
    name = f"{sts}-{ordinal}"
    ctr = container()
    if limits:
        ctr["resources"] = {"limits": dict(limits), "requests": dict(limits)}
    if env:
        ctr["env"] = env
    meta = {"name": name, "generateName": f"{sts}-", "namespace": NS,
            "labels": {"app": sts, "distenv.dev/inject": "true",
                       "apps.kubernetes.io/pod-index": str(ordinal),
                       "controller-revision-hash": f"{sts}-5f6d8c7b9",
                       "statefulset.kubernetes.io/pod-name": name},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": sts,
                                 "uid": "6c1f6e0a-3a51-4b7e-9d0e-0d5b2c1f9a%02d" % ordinal,
                                 "controller": True, "blockOwnerDeletion": True}]}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"metadata": meta,
            "spec": {"containers": [ctr], "restartPolicy": "Always",
                     "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                     "hostname": name, "subdomain": service or sts,
                     "schedulerName": "default-scheduler"},
            "status": {}}


def job_pod(job, i, uid, marks=None, annotations=None, subdomain=None):
    """A pod of an Indexed Job as the Job controller makes it (indexed_job_utils.go);
    marks: labels and annotations its owner (JobSet) put on the template."""
    labels = dict(marks or {}, **{
        "distenv.dev/inject": "true",
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": job,
        "controller-uid": uid, "job-name": job,
        "batch.kubernetes.io/job-completion-index": str(i),
    })
    annotations = dict(marks or {}, **(annotations or {}),
                       **{"batch.kubernetes.io/job-completion-index": str(i)})
    ctr = container()
    ctr["env"] = [{"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
        "apiVersion": "v1",
        "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}]
    return {
        "metadata": {
            "generateName": f"{job}-{i}-", "labels": labels, "annotations": annotations,
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": job,
                                 "uid": uid, "controller": True,
                                 "blockOwnerDeletion": True}]},
        "spec": {"containers": [ctr], "restartPolicy": "Never",
                 "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                 "hostname": f"{job}-{i}", "subdomain": subdomain or job,
                 "schedulerName": "default-scheduler"},
        "status": {},
    }


def validate_review(uid, obj, group, resource):
    """The AdmissionReview /validate gets when obj is created."""
    gvk = {"group": group, "version": obj["apiVersion"].split("/")[-1], "kind": obj["kind"]}
    gvr = {"group": group, "version": gvk["version"], "resource": resource}
    return {
        "kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1",
        "request": {
            "uid": uid, "kind": gvk, "resource": gvr, "requestKind": gvk,
            "requestResource": gvr, "name": obj["metadata"]["name"], "namespace": NS,
            "operation": "CREATE", "userInfo": {"username": "alice"},
            "object": obj, "oldObject": None, "dryRun": False,
            "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"},
        },
    }


def sts_object(sts, env, annotations=None):
    """A StatefulSet of 2 whose pod template opts in, its container's env as given."""
    return {
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": sts, "namespace": NS},
        "spec": {
            "replicas": 2, "serviceName": sts, "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": sts}},
            "template": {
                "metadata": {"labels": {"app": sts, "distenv.dev/inject": "true"},
                             "annotations": annotations or {}},
                "spec": {"containers": [dict(container(), env=env)]},
            },
        },
    }


def lws_object(lws, worker_env):
    """A LeaderWorkerSet of 2 groups of 4, both templates opted in."""
    def tmpl(role, env):
        return {"metadata": {"labels": {"role": role, "distenv.dev/inject": "true"}},
                "spec": {"containers": [dict(container(), name=role, env=env)]}}
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
        "metadata": {"name": lws, "namespace": NS},
        "spec": {"replicas": 2, "leaderWorkerTemplate": {
            "size": 4, "leaderTemplate": tmpl("leader", []),
            "workerTemplate": tmpl("worker", worker_env)}},
    }


def write(name, req, lookup=None):
    with open(os.path.join(DATA, name + ".request.json"), "w") as f:
        json.dump(req, f, indent=2)
        f.write("\n")
    if lookup is not None:
        with open(os.path.join(DATA, name + ".lookup.json"), "w") as f:
            json.dump(lookup, f, indent=2)
            f.write("\n")


def main():
    job_sa = "system:serviceaccount:kube-system:job-controller"
    sts_sa = "system:serviceaccount:kube-system:statefulset-controller"
    two = [("a", 2, 2), ("b", 1, 3)]
    write("jobset-rank3", review("5f2a3c1e-0101-4d6b-9a1e-000000000101",
                                 jobset_pod("js", two, "a", 1, 1), job_sa),
          {"kind": "JobSet", "object": jobset_object("js", two)})
    write("jobset-rank6", review("5f2a3c1e-0102-4d6b-9a1e-000000000102",
                                 jobset_pod("js", two, "b", 0, 2), job_sa),
          {"kind": "JobSet", "object": jobset_object("js", two)})
    coord = {"replicatedJob": "b", "jobIndex": 0, "podIndex": 1}
    write("jobset-coordinator", review("5f2a3c1e-0103-4d6b-9a1e-000000000103",
                                       jobset_pod("js", two, "a", 0, 0, "js-b-0-1.js"), job_sa),
          {"kind": "JobSet", "object": jobset_object("js", two, coord)})
    # JobSet's own coordinator example (examples/coordinator): the driver is
    # listed after the workers, yet it is rank 0 and MASTER_ADDR.
    example = [("workers", 1, 4), ("driver", 1, 1)]
    driver = {"replicatedJob": "driver", "jobIndex": 0, "podIndex": 0}
    write("jobset-coordinator-driver",
          review("5f2a3c1e-0107-4d6b-9a1e-000000000107",
                 jobset_pod("js", example, "driver", 0, 0, "js-driver-0-0.js"), job_sa),
          {"kind": "JobSet", "object": jobset_object("js", example, driver)})
    write("jobset-coordinator-worker",
          review("5f2a3c1e-0108-4d6b-9a1e-000000000108",
                 jobset_pod("js", example, "workers", 0, 2, "js-driver-0-0.js"), job_sa),
          {"kind": "JobSet", "object": jobset_object("js", example, driver)})
    roles = [("chief", 1, 1), ("worker", 1, 2), ("ps", 1, 1)]
    write("jobset-tf-roles", review("5f2a3c1e-0104-4d6b-9a1e-000000000104",
                                    jobset_pod("tf", roles, "worker", 0, 1), job_sa),
          {"kind": "JobSet", "object": jobset_object("tf", roles)})
    # TensorFlow's parameter-server layout with a sidecar evaluator: the
    # evaluator is a cluster of its own (a worker's TF_CONFIG leaves it out).
    ps_eval = [("chief", 1, 1), ("worker", 1, 2), ("ps", 1, 1), ("evaluator", 1, 1)]
    write("jobset-tf-evaluator", review("5f2a3c1e-0107-4d6b-9a1e-000000000107",
                                        jobset_pod("tf", ps_eval, "evaluator", 0, 0), job_sa),
          {"kind": "JobSet", "object": jobset_object("tf", ps_eval)})
    write("jobset-tf-evaluator-worker", review("5f2a3c1e-0108-4d6b-9a1e-000000000108",
                                               jobset_pod("tf", ps_eval, "worker", 0, 1), job_sa),
          {"kind": "JobSet", "object": jobset_object("tf", ps_eval)})
    # Launchers: what decides LOCAL_RANK, and the frameworks xgboost and paddle.
    replicas = {"replicas": 4}
    launch = [
        ("sts-gpu1", sts_pod("ddp", 1, limits={"nvidia.com/gpu": "1"})),
        ("sts-gpu8", sts_pod("ddp", 1, limits={"nvidia.com/gpu": "8"})),
        ("sts-cpu", sts_pod("ddp", 1, limits={"cpu": "4"})),
        ("sts-cpu-nproc1", sts_pod("ddp", 1, {"distenv.dev/nproc-per-node": "1"},
                                   limits={"cpu": "4"})),
        ("sts-gpu8-own-local-rank",
         sts_pod("ddp", 1, limits={"nvidia.com/gpu": "8"},
                 env=[{"name": "LOCAL_RANK", "value": "0"}])),
        ("sts-paddle-rank0", sts_pod("pd", 0, {"distenv.dev/frameworks": "paddle"})),
        ("sts-paddle-rank1", sts_pod("pd", 1, {"distenv.dev/frameworks": "paddle"})),
    ]
    for k, (name, pod) in enumerate(launch):
        write(name, review("5f2a3c1e-02%02d-4d6b-9a1e-0000000002%02d" % (k, k), pod, sts_sa),
              replicas)
    write("job-xgboost", review("5f2a3c1e-0210-4d6b-9a1e-000000000210",
                                job_pod("xgb", 2, "7d0f5a3c-2b9e-4c61-9f7a-1e2d3c4b5a61",
                                        annotations={"distenv.dev/frameworks": "xgboost"}),
                                job_sa),
          {"completions": 3, "parallelism": 3, "indexed": True})
    gpus = job_pod("xgb", 1, "7d0f5a3c-2b9e-4c61-9f7a-1e2d3c4b5a61",
                   annotations={"distenv.dev/frameworks": "xgboost"})
    gpus["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": "4"}}
    write("job-xgboost-gpus4", review("5f2a3c1e-0212-4d6b-9a1e-000000000212", gpus, job_sa),
          {"completions": 3, "parallelism": 3, "indexed": True})
    xgb = [("tracker", 1, 1), ("workers", 2, 2)]
    xpod = jobset_pod("xg", xgb, "workers", 1, 0)
    xpod["metadata"]["annotations"]["distenv.dev/frameworks"] = "xgboost"
    xobj = jobset_object("xg", xgb)
    for rj in xobj["spec"]["replicatedJobs"]:
        rj["template"]["spec"]["template"]["metadata"]["annotations"] = {
            "distenv.dev/frameworks": "xgboost"}
    write("jobset-xgboost", review("5f2a3c1e-0211-4d6b-9a1e-000000000211", xpod, job_sa),
          {"kind": "JobSet", "object": xobj})
    # A second mutating webhook rewrote the Job pod's spec.hostname: distenv
    # would derive MASTER_ADDR train-0... while the pod is named custom.
    renamed = job_pod("train", 1, "7d0f5a3c-2b9e-4c61-9f7a-1e2d3c4b5a62")
    renamed["spec"]["hostname"] = "custom"
    write("denied-job-renamed", review("5f2a3c1e-0213-4d6b-9a1e-000000000213", renamed, job_sa),
          {"completions": 3, "parallelism": 3, "indexed": True})
    # A container's MASTER_ADDR or MASTER_PORT from valueFrom: every pod would be
    # denied (PET_MASTER_ADDR, ... would disagree with it) unless the container
    # sets what distenv derives from it too, so /validate denies it at apply. The
    # golden harness runs without look-ups: the world is the annotation's.
    two_pods = {"distenv.dev/world-size": "2"}
    pod_ip = {"name": "MASTER_ADDR", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
    write("validate-sts-master-addr-valuefrom",
          validate_review("5f2a3c1e-0301-4d6b-9a1e-000000000301", sts_object("ddp", [pod_ip], two_pods),
                          "apps", "statefulsets"))
    write("validate-sts-master-addr-valuefrom-derived",
          validate_review("5f2a3c1e-0302-4d6b-9a1e-000000000302",
                          sts_object("ddp", [pod_ip, {"name": "PET_MASTER_ADDR", "valueFrom": {
                              "fieldRef": {"fieldPath": "status.podIP"}}}], two_pods),
                          "apps", "statefulsets"))
    # elastic: PET_RDZV_ENDPOINT is derived from it too, and the container lacks it
    write("validate-sts-master-addr-valuefrom-elastic",
          validate_review("5f2a3c1e-0303-4d6b-9a1e-000000000303",
                          sts_object("ddp", [pod_ip, {"name": "PET_MASTER_ADDR", "valueFrom": {
                              "fieldRef": {"fieldPath": "status.podIP"}}}],
                                     dict(two_pods, **{"distenv.dev/elastic": "1:2"})),
                          "apps", "statefulsets"))
    port_cm = {"name": "MASTER_PORT",
               "valueFrom": {"configMapKeyRef": {"name": "rdzv", "key": "port"}}}
    write("validate-lws-master-port-valuefrom",
          validate_review("5f2a3c1e-0304-4d6b-9a1e-000000000304", lws_object("lws", [port_cm]),
                          "leaderworkerset.x-k8s.io", "leaderworkersets"))
    tpu(job_sa, sts_sa)
    write("lws-leader", review("5f2a3c1e-0105-4d6b-9a1e-000000000105",
                               lws_pod("lws", 1, 0, 4), sts_sa))
    write("lws-worker", review("5f2a3c1e-0106-4d6b-9a1e-000000000106",
                               lws_pod("lws", 1, 3, 4), sts_sa))


def tpu_limit(pod, chips="4"):
    """The pod's first container requests and limits google.com/tpu, as GKE's TPU pods do."""
    pod["spec"]["containers"][0]["resources"] = {"limits": {"google.com/tpu": chips},
                                                 "requests": {"google.com/tpu": chips}}
    return pod


def tpu(job_sa, sts_sa):
    """The tpu framework: one slice a StatefulSet, Indexed Job or LeaderWorkerSet group,
    one slice a Job of a JobSet (multislice), tpu beside pytorch, host lists over
    the exec limit, and the worlds JAX's ids cannot express."""
    write("tpu-sts", review("5f2a3c1e-0301-4d6b-9a1e-000000000301",
                            tpu_limit(sts_pod("tp", 2)), sts_sa), {"replicas": 4})
    write("tpu-job", review("5f2a3c1e-0302-4d6b-9a1e-000000000302",
                            tpu_limit(job_pod("tpj", 3, "7d0f5a3c-2b9e-4c61-9f7a-1e2d3c4b5a63")),
                            job_sa),
          {"completions": 4, "parallelism": 4, "indexed": True})
    slices = [("slice", 2, 2)]
    sobj = jobset_object("ms", slices)
    for rj in sobj["spec"]["replicatedJobs"]:
        tpu_limit(rj["template"]["spec"]["template"])
    write("tpu-jobset-multislice", review("5f2a3c1e-0303-4d6b-9a1e-000000000303",
                                          tpu_limit(jobset_pod("ms", slices, "slice", 1, 1)),
                                          job_sa),
          {"kind": "JobSet", "object": sobj})
    worker = tpu_limit(lws_pod("tl", 0, 2, 4))
    worker["metadata"]["annotations"]["leaderworkerset.sigs.k8s.io/leader-requests-tpus"] = "true"
    write("tpu-lws-worker", review("5f2a3c1e-0304-4d6b-9a1e-000000000304", worker, sts_sa))
    write("tpu-pytorch", review("5f2a3c1e-0305-4d6b-9a1e-000000000305",
                                tpu_limit(sts_pod("tp", 1, {"distenv.dev/frameworks": "pytorch,tpu"})),
                                sts_sa), {"replicas": 4})
    # 5,000 hosts of about 40 bytes: TPU_WORKER_HOSTNAMES (and TF_CONFIG) pass
    # Linux's 131,072 bytes for one variable.
    write("tpu-over-budget-default", review("5f2a3c1e-0306-4d6b-9a1e-000000000306",
                                            tpu_limit(sts_pod("tp", 7)), sts_sa),
          {"replicas": 5000})
    write("denied-tpu-over-budget", review("5f2a3c1e-0307-4d6b-9a1e-000000000307",
                                           tpu_limit(sts_pod("tp", 7, {"distenv.dev/frameworks": "pytorch,tpu"})),
                                           sts_sa), {"replicas": 5000})
    uneven = [("a", 1, 2), ("b", 1, 3)]
    write("denied-tpu-jobset-uneven", review("5f2a3c1e-0308-4d6b-9a1e-000000000308",
                                             tpu_limit(jobset_pod("uj", uneven, "b", 0, 1)),
                                             job_sa),
          {"kind": "JobSet", "object": jobset_object("uj", uneven)})
    write("denied-tpu-lws-cpu-leader", review("5f2a3c1e-0309-4d6b-9a1e-000000000309",
                                              tpu_limit(lws_pod("tl", 0, 2, 4)), sts_sa))
    # /validate at apply time: the same JobSets, their templates requesting TPUs.
    for k, (name, shape) in enumerate([("validate-tpu-jobset-multislice", [("slice", 2, 2)]),
                                       ("validate-tpu-jobset-uneven", uneven)]):
        obj = jobset_object("vj", shape)
        for rj in obj["spec"]["replicatedJobs"]:
            tpu_limit(rj["template"]["spec"]["template"])
        if len(shape) == 1:
            # served without look-ups: one replicated Job's pods read the world from
            # distenv.dev/world-size (else /validate refuses it: every pod would be)
            meta = obj["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"]
            meta.setdefault("annotations", {})["distenv.dev/world-size"] = str(
                shape[0][1] * shape[0][2])
        rev = review("5f2a3c1e-031%d-4d6b-9a1e-00000000031%d" % (k, k), obj, "alice")
        gvk = {"group": "jobset.x-k8s.io", "version": "v1alpha2", "kind": "JobSet"}
        rev["request"].update({
            "kind": gvk, "requestKind": gvk, "name": "vj",
            "resource": {"group": "jobset.x-k8s.io", "version": "v1alpha2",
                         "resource": "jobsets"}})
        rev["request"]["requestResource"] = rev["request"]["resource"]
        # several replicated Jobs: served with look-ups (a namespace without
        # NetworkPolicies), as without them /validate refuses it: every pod would be
        write(name, rev, None if len(shape) == 1 else {"networkPolicies": []})
    # /validate: a LeaderWorkerSet whose workers request TPUs and whose leader does
    # not (denied-tpu-lws-cpu-leader's shape): each worker would be refused, so the
    # apply is.
    lws = lws_object("tl", [])
    tpu_limit(lws["spec"]["leaderWorkerTemplate"]["workerTemplate"])
    write("validate-tpu-lws-cpu-leader",
          validate_review("5f2a3c1e-0312-4d6b-9a1e-000000000312", lws,
                          "leaderworkerset.x-k8s.io", "leaderworkersets"))



# ---------------------------------------------------------------- pods of a manifest
# What the controllers make of a workload as applied: the API server's and the
# kinds' defaulting first (the object they store), then every pod, in order.
# Sources as above, at the tags the e2e tiers pin: Kubernetes v1.36.3
# (pkg/apis/*/v1/defaults.go; controller_utils.go GetPodFromTemplate;
# stateful_set_utils.go newStatefulSetPod, initIdentity, updateIdentity;
# job_controller.go manageJob and indexed_job_utils.go), JobSet v0.12.0
# (jobset_webhook.go Default, jobset_controller.go constructJob,
# labelAndAnnotateObject), LeaderWorkerSet v0.9.0 (leaderworkerset_webhook.go
# Default, leaderworkerset_controller.go constructLeaderStatefulSetApplyConfiguration,
# pod_controller.go constructWorkerStatefulSetApplyConfiguration,
# accelerators/tpu.go AddTPUAnnotations).
INT32_MAX = 2147483647


def _image_pull_policy(image):
    """SetDefaults_Container: Always for :latest or no tag, else IfNotPresent."""
    tail = (image or "").split("@")[0].rsplit("/", 1)[-1]
    tag = tail.split(":", 1)[1] if ":" in tail else ""
    return "Always" if tag in ("", "latest") and "@" not in (image or "") else "IfNotPresent"


def pod_spec_defaults(spec, restart="Always"):
    """What the API server's defaulting sets in a pod template's spec (core/v1 defaults.go)."""
    spec.setdefault("restartPolicy", restart)
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or []:
            c.setdefault("terminationMessagePath", "/dev/termination-log")
            c.setdefault("terminationMessagePolicy", "File")
            c.setdefault("imagePullPolicy", _image_pull_policy(c.get("image")))
            res = c.get("resources")
            if res is None:
                c["resources"] = {}
            elif res.get("limits"):
                # SetDefaults_Pod: requests default to the limits
                req = res.setdefault("requests", {})
                for k, v in res["limits"].items():
                    req.setdefault(k, v)
            for e in c.get("env") or []:
                ref = (e.get("valueFrom") or {}).get("fieldRef")
                if ref is not None:
                    ref.setdefault("apiVersion", "v1")
    return spec


def _template(t, restart="Always"):
    t = copy.deepcopy(t or {})
    t.setdefault("metadata", {})
    pod_spec_defaults(t.setdefault("spec", {}), restart)
    return t


def stored(obj):
    """The object the API server stores for a manifest document: its kind's defaults."""
    obj = copy.deepcopy(obj)
    kind, spec = obj.get("kind"), obj.setdefault("spec", {})
    if kind == "StatefulSet":
        spec.setdefault("replicas", 1)
        spec.setdefault("podManagementPolicy", "OrderedReady")
        spec["template"] = _template(spec.get("template"))
    elif kind == "Job":
        if spec.get("completions") is None and spec.get("parallelism") is None:
            spec["completions"] = spec["parallelism"] = 1
        spec.setdefault("parallelism", 1)
        spec.setdefault("completionMode", "NonIndexed")
        spec.setdefault("backoffLimit", 6)
        spec["template"] = _template(spec.get("template"), "Never")
    elif kind == "JobSet":
        spec.setdefault("successPolicy", {"operator": "All"})
        spec.setdefault("startupPolicy", {"startupPolicyOrder": "AnyOrder"})
        for rj in spec.get("replicatedJobs") or []:
            rj.setdefault("replicas", 1)       # the CRD's default
            rj.setdefault("groupName", "default")
            jspec = rj.setdefault("template", {}).setdefault("spec", {})
            jspec.setdefault("completionMode", "Indexed")
            tspec = jspec.setdefault("template", {}).setdefault("spec", {})
            tspec.setdefault("restartPolicy", "OnFailure")
            if jspec.get("completions") is None and jspec.get("parallelism") is None:
                jspec["completions"] = jspec["parallelism"] = 1
            jspec.setdefault("parallelism", 1)
            jspec["template"] = _template(jspec["template"], "OnFailure")
        net = spec.setdefault("network", {})
        net.setdefault("enableDNSHostnames", True)
        net.setdefault("publishNotReadyAddresses", True)
    elif kind == "LeaderWorkerSet":
        spec.setdefault("replicas", 1)
        lwt = spec.setdefault("leaderWorkerTemplate", {})
        lwt.setdefault("size", 1)
        for k in ("leaderTemplate", "workerTemplate"):
            if lwt.get(k) is not None:
                lwt[k] = _template(lwt[k])
        net = spec.setdefault("networkConfig", {})
        net.setdefault("subdomainPolicy", "Shared")
    return obj


def _uid(*parts):
    h = hashlib.sha1("/".join(str(p) for p in parts).encode()).hexdigest()
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:32])


def _from_template(tmpl, generate, owner_api, owner_kind, owner, uid):
    """controller_utils.go GetPodFromTemplate: the template's labels, annotations and
    spec, generateName, the controller reference."""
    meta = tmpl.get("metadata") or {}
    pod = {"metadata": {"generateName": generate,
                        "labels": dict(meta.get("labels") or {}),
                        "ownerReferences": [{"apiVersion": owner_api, "kind": owner_kind,
                                             "name": owner, "uid": uid, "controller": True,
                                             "blockOwnerDeletion": True}]},
           "spec": copy.deepcopy(tmpl.get("spec") or {}), "status": {}}
    if meta.get("annotations"):
        pod["metadata"]["annotations"] = dict(meta["annotations"])
    return pod


def _sts_pod(tmpl, sts, ns, service, ordinal, revision):
    """newVersionedStatefulSetPod: the name from the ordinal, then updateIdentity reads the
    ordinal back from the name with a 32-bit parse, so an ordinal past 2^31-1 becomes -1."""
    pod = _from_template(tmpl, sts + "-", "apps/v1", "StatefulSet", sts, _uid("sts", ns, sts))
    ordinal = ordinal if ordinal <= INT32_MAX else -1
    name = "%s-%d" % (sts, ordinal)
    pod["metadata"].update(name=name, namespace=ns)
    pod["metadata"]["labels"].update({"statefulset.kubernetes.io/pod-name": name,
                                      "apps.kubernetes.io/pod-index": str(ordinal),
                                      "controller-revision-hash": "%s-%s" % (sts, revision)})
    pod["spec"]["hostname"] = name
    pod["spec"]["subdomain"] = service or ""
    if not pod["spec"]["subdomain"]:
        del pod["spec"]["subdomain"]
    return pod


def _job_selector_labels(tmpl, job, uid):
    """The Job API's generated selector labels on its template (job/strategy.go)."""
    labels = tmpl.setdefault("metadata", {}).setdefault("labels", {})
    labels.update({"batch.kubernetes.io/controller-uid": uid,
                   "batch.kubernetes.io/job-name": job, "controller-uid": uid,
                   "job-name": job})


def _job_pods(jspec, job, ns, uid):
    """job_controller.go manageJob: Indexed, one pod per completion index with the index as
    annotation and label, hostname <job>-<i>, generateName <job>-<i>-, and
    JOB_COMPLETION_INDEX in every container (indexed_job_utils.go); NonIndexed,
    parallelism pods named <job>-."""
    tmpl = copy.deepcopy(jspec["template"])
    _job_selector_labels(tmpl, job, uid)
    indexed = jspec.get("completionMode") == "Indexed"
    if not indexed:
        n = min(jspec.get("parallelism", 1), jspec.get("completions") or jspec["parallelism"])
        return [_from_template(tmpl, job + "-", "batch/v1", "Job", job, uid) for _ in range(n)]
    for key in ("initContainers", "containers"):
        for c in tmpl["spec"].get(key) or []:
            env = c.setdefault("env", [])
            if not any(e.get("name") == "JOB_COMPLETION_INDEX" for e in env):
                env.append({"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
                    "apiVersion": "v1",
                    "fieldPath": "metadata.labels['batch.kubernetes.io/job-completion-index']"}}})
    pods = []
    for i in range(jspec.get("completions") or 0):
        pod = _from_template(tmpl, "%s-%d-" % (job, i), "batch/v1", "Job", job, uid)
        pod["metadata"].setdefault("annotations", {})[
            "batch.kubernetes.io/job-completion-index"] = str(i)
        pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] = str(i)
        pod["spec"]["hostname"] = "%s-%d" % (job, i)
        pods.append(pod)
    return pods


def _jobset_pods(js, ns):
    name, spec = js["metadata"]["name"], js["spec"]
    rjobs = spec.get("replicatedJobs") or []
    uid = js["metadata"].get("uid") or _uid("jobset", ns, name)
    total = sum(rj["replicas"] for rj in rjobs)
    sub = spec["network"].get("subdomain") or name
    coord = spec.get("coordinator")
    pods, gidx = [], 0
    for rj in rjobs:
        group = rj["groupName"]
        group_reps = sum(r["replicas"] for r in rjobs if r["groupName"] == group)
        before_in_group = 0
        for r in rjobs:
            if r is rj:
                break
            if r["groupName"] == group:
                before_in_group += r["replicas"]
        for j in range(rj["replicas"]):
            job = "%s-%s-%d" % (name, rj["name"], j)
            marks = {
                "jobset.sigs.k8s.io/jobset-name": name,
                "jobset.sigs.k8s.io/jobset-uid": uid,
                "jobset.sigs.k8s.io/replicatedjob-name": rj["name"],
                "jobset.sigs.k8s.io/restart-attempt": "0",
                "jobset.sigs.k8s.io/replicatedjob-replicas": str(rj["replicas"]),
                "jobset.sigs.k8s.io/global-replicas": str(total),
                "jobset.sigs.k8s.io/job-index": str(j),
                "jobset.sigs.k8s.io/job-key": hashlib.sha1(
                    ("%s/%s" % (ns, job)).encode()).hexdigest(),
                "jobset.sigs.k8s.io/job-global-index": str(gidx + j),
                "jobset.sigs.k8s.io/group-name": group,
                "jobset.sigs.k8s.io/group-replicas": str(group_reps),
                "jobset.sigs.k8s.io/job-group-index": str(before_in_group + j),
            }
            if coord:
                marks["jobset.sigs.k8s.io/coordinator"] = "%s-%s-%d-%d.%s" % (
                    name, coord["replicatedJob"], coord.get("jobIndex", 0),
                    coord.get("podIndex", 0), sub)
            jspec = copy.deepcopy(rj["template"]["spec"])
            meta = jspec["template"].setdefault("metadata", {})
            meta["labels"] = dict(meta.get("labels") or {}, **marks)
            meta["annotations"] = dict(meta.get("annotations") or {}, **marks)
            if spec["network"].get("enableDNSHostnames"):
                jspec["template"]["spec"]["subdomain"] = sub
            pods += _job_pods(jspec, job, ns, _uid("job", ns, job))
        gidx += rj["replicas"]
    return pods


def _requests_tpus(spec):
    """accelerators/tpu.go PodRequestsTPUs: a container or init container's limit, else
    request, of google.com/tpu above zero."""
    def qty(v):
        try:
            return float(str(v).rstrip("m") or 0) != 0
        except ValueError:
            return True
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            res = c.get("resources") or {}
            for part in ("limits", "requests"):
                if qty((res.get(part) or {}).get("google.com/tpu", 0)):
                    return True
    return False


def _lws_pods(lws, ns):
    name, spec = lws["metadata"]["name"], lws["spec"]
    lwt = spec["leaderWorkerTemplate"]
    size, unique = lwt["size"], spec["networkConfig"]["subdomainPolicy"] == "UniquePerReplica"
    leader_t = copy.deepcopy(lwt.get("leaderTemplate") or lwt["workerTemplate"])
    meta = leader_t.setdefault("metadata", {})
    meta["labels"] = dict(meta.get("labels") or {}, **{
        "leaderworkerset.sigs.k8s.io/worker-index": "0",
        "leaderworkerset.sigs.k8s.io/name": name,
        "leaderworkerset.sigs.k8s.io/template-revision-hash": "6d8f7c9b5"})
    ann = {"leaderworkerset.sigs.k8s.io/size": str(size)}
    if unique:
        ann["leaderworkerset.sigs.k8s.io/subdomainPolicy"] = "UniquePerReplica"
    # spec.leaderWorkerTemplate.subGroupPolicy: leaders and workers are told the subgroup
    # size (leaderworkerset_controller.go and pod_controller.go, SubGroupSizeAnnotationKey)
    sub = {}
    if lwt.get("subGroupPolicy"):
        sub["leaderworkerset.sigs.k8s.io/subgroup-size"] = str(
            lwt["subGroupPolicy"]["subGroupSize"])
    ann.update(sub)
    meta["annotations"] = dict(meta.get("annotations") or {}, **ann)
    pods = []
    for g in range(spec["replicas"]):
        leader = _sts_pod(leader_t, name, ns, name, g, "5b7c9d8f6")
        pods.append(leader)
        if size < 2:
            continue
        wt = copy.deepcopy(lwt["workerTemplate"])
        wmeta = wt.setdefault("metadata", {})
        group_key = hashlib.sha1(("%s/%s" % (ns, leader["metadata"]["name"])).encode()).hexdigest()
        wmeta["labels"] = dict(wmeta.get("labels") or {}, **{
            "leaderworkerset.sigs.k8s.io/group-index": str(g),
            "leaderworkerset.sigs.k8s.io/name": name,
            "leaderworkerset.sigs.k8s.io/group-key": group_key,
            "leaderworkerset.sigs.k8s.io/template-revision-hash": "6d8f7c9b5"})
        wann = {"leaderworkerset.sigs.k8s.io/size": str(size),
                "leaderworkerset.sigs.k8s.io/leader-name": leader["metadata"]["name"], **sub}
        if _requests_tpus(leader["spec"]):
            wann["leaderworkerset.sigs.k8s.io/leader-requests-tpus"] = "true"
        wmeta["annotations"] = dict(wmeta.get("annotations") or {}, **wann)
        wsts = leader["metadata"]["name"]
        for i in range(1, size):
            pods.append(_sts_pod(wt, wsts, ns, wsts if unique else name, i, "7c9d8f6b5"))
    return pods


def workload_pods(doc, default_ns="default"):
    """(stored object, its API path, [pods]) for one manifest document the controllers act
    on; None for other kinds. The pods are in the order their controllers number them."""
    kind, meta = doc.get("kind"), doc.get("metadata") or {}
    name, ns = meta.get("name"), meta.get("namespace") or default_ns
    if kind not in ("StatefulSet", "Job", "JobSet", "LeaderWorkerSet") or not name:
        return None
    obj = stored(doc)
    obj["metadata"]["namespace"] = ns
    spec = obj["spec"]
    if kind == "StatefulSet":
        start = (spec.get("ordinals") or {}).get("start", 0)
        pods = [_sts_pod(spec["template"], name, ns, spec.get("serviceName"), start + i,
                         "5f6d8c7b9") for i in range(spec["replicas"])]
        path = "/apis/apps/v1/namespaces/%s/statefulsets/%s" % (ns, name)
    elif kind == "Job":
        pods = _job_pods(spec, name, ns, _uid("job", ns, name))
        path = "/apis/batch/v1/namespaces/%s/jobs/%s" % (ns, name)
    elif kind == "JobSet":
        pods = _jobset_pods(obj, ns)
        path = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/%s/jobsets/%s" % (ns, name)
    else:
        pods = _lws_pods(obj, ns)
        path = "/apis/leaderworkerset.x-k8s.io/v1/namespaces/%s/leaderworkersets/%s" % (ns, name)
    return obj, path, pods


if __name__ == "__main__":
    main()
