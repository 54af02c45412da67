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
    # sets what distenv derives from it too, so /validate denies it at apply.
    pod_ip = {"name": "MASTER_ADDR", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
    write("validate-sts-master-addr-valuefrom",
          validate_review("5f2a3c1e-0301-4d6b-9a1e-000000000301", sts_object("ddp", [pod_ip]),
                          "apps", "statefulsets"))
    write("validate-sts-master-addr-valuefrom-derived",
          validate_review("5f2a3c1e-0302-4d6b-9a1e-000000000302",
                          sts_object("ddp", [pod_ip, {"name": "PET_MASTER_ADDR", "valueFrom": {
                              "fieldRef": {"fieldPath": "status.podIP"}}}]),
                          "apps", "statefulsets"))
    # elastic: PET_RDZV_ENDPOINT is derived from it too, and the container lacks it
    write("validate-sts-master-addr-valuefrom-elastic",
          validate_review("5f2a3c1e-0303-4d6b-9a1e-000000000303",
                          sts_object("ddp", [pod_ip, {"name": "PET_MASTER_ADDR", "valueFrom": {
                              "fieldRef": {"fieldPath": "status.podIP"}}}],
                                     {"distenv.dev/elastic": "1:2"}),
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
        rev = review("5f2a3c1e-031%d-4d6b-9a1e-00000000031%d" % (k, k), obj, "alice")
        gvk = {"group": "jobset.x-k8s.io", "version": "v1alpha2", "kind": "JobSet"}
        rev["request"].update({
            "kind": gvk, "requestKind": gvk, "name": "vj",
            "resource": {"group": "jobset.x-k8s.io", "version": "v1alpha2",
                         "resource": "jobsets"}})
        rev["request"]["requestResource"] = rev["request"]["resource"]
        write(name, rev)


if __name__ == "__main__":
    main()
