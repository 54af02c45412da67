#!/usr/bin/env python3
"""Writes the AdmissionReview bodies the benchmarks and fault tests send.

  gen_reviews.py OUTDIR            sts-4k.json, pod-64k.json, job-w1024.json
  gen_reviews.py OUTDIR --world W  also job-wW.json for a W-rank Indexed Job

The objects look like what kube-apiserver sends for a real pod of a
StatefulSet or an Indexed Job: defaulted fields, a projected service-account
volume, tolerations, resources, compact JSON. Sizes are padded to the target
with user env entries, so the bodies are deterministic.
"""
import argparse
import json
import os
import sys


def container(name, n_env, image="registry.example/ml/trainer:2.5.1-cuda12.4", gpus=0):
    res = {"limits": {"cpu": "8", "memory": "32Gi"}, "requests": {"cpu": "4", "memory": "16Gi"}}
    if gpus:
        res["limits"]["nvidia.com/gpu"] = str(gpus)
        res["requests"]["nvidia.com/gpu"] = str(gpus)
    env = [{"name": "DATASET_SHARD_%03d" % i, "value": "s3://datasets/imagenet/train/shard-%05d" % i}
           for i in range(n_env)]
    return {
        "name": name,
        "image": image,
        "command": ["python3", "-u", "/opt/train/train.py"],
        "args": ["--epochs", "90", "--batch-size", "256", "--lr", "0.1"],
        "ports": [{"name": "rendezvous", "containerPort": 29500, "protocol": "TCP"}],
        "env": env,
        "resources": res,
        "volumeMounts": [
            {"name": "train", "mountPath": "/opt/train"},
            {"name": "dshm", "mountPath": "/dev/shm"},
            {"name": "kube-api-access-7xk2p", "readOnly": True,
             "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"},
        ],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent",
    }


def pod_spec(containers, hostname, subdomain, restart):
    return {
        "volumes": [
            {"name": "train", "configMap": {"name": "ddp-train", "defaultMode": 420}},
            {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}},
            {"name": "kube-api-access-7xk2p", "projected": {"sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
                    "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}],
                "defaultMode": 420}},
        ],
        "containers": containers,
        "restartPolicy": restart,
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default",
        "serviceAccount": "default",
        "securityContext": {},
        "hostname": hostname,
        "subdomain": subdomain,
        "schedulerName": "default-scheduler",
        "tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 300},
        ],
        "priority": 0,
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
    }


def review(obj, uid, ns):
    return {
        "kind": "AdmissionReview",
        "apiVersion": "admission.k8s.io/v1",
        "request": {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "requestKind": {"group": "", "version": "v1", "kind": "Pod"},
            "requestResource": {"group": "", "version": "v1", "resource": "pods"},
            "namespace": ns,
            "operation": "CREATE",
            "userInfo": {"username": "system:serviceaccount:kube-system:statefulset-controller",
                         "uid": "0b7c2a39-1c55-4f1e-8a38-2b1c7f1d5e11",
                         "groups": ["system:serviceaccounts", "system:serviceaccounts:kube-system",
                                    "system:authenticated"]},
            "object": obj,
            "oldObject": None,
            "dryRun": False,
            "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"},
        },
    }


def sts_review(n_containers, n_env, ordinal=3, world=8):
    name = "ddp-%d" % ordinal
    meta = {
        "name": name, "generateName": "ddp-", "namespace": "ml",
        "uid": "9a0e4d1c-5b7f-4c2e-8d3a-6f1b2c3d4e5f",
        "creationTimestamp": None,
        "labels": {"app.kubernetes.io/name": "ddp", "distenv.dev/inject": "true",
                   "apps.kubernetes.io/pod-index": str(ordinal),
                   "controller-revision-hash": "ddp-5f6d8c7b9",
                   "statefulset.kubernetes.io/pod-name": name},
        "annotations": {"distenv.dev/world-size": str(world)},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "ddp",
                             "uid": "6c1f6e0a-3a51-4b7e-9d0e-0d5b2c1f9a01", "controller": True,
                             "blockOwnerDeletion": True}],
    }
    cs = [container("trainer" if i == 0 else "sidecar-%d" % i, n_env, gpus=8 if i == 0 else 0)
          for i in range(n_containers)]
    obj = {"metadata": meta, "spec": pod_spec(cs, name, "ddp-headless", "Always"), "status": {}}
    return review(obj, "5f2a3c1e-0001-4d6b-9a1e-%012d" % ordinal, "ml")


def job_review(world, index=17, n_env=2):
    meta = {
        "generateName": "train-%d-" % index, "namespace": "ml",
        "creationTimestamp": None,
        "labels": {"batch.kubernetes.io/controller-uid": "7d0f5a3c-2b9e-4c61-9f7a-1e2d3c4b5a60",
                   "batch.kubernetes.io/job-completion-index": str(index),
                   "batch.kubernetes.io/job-name": "train", "job-name": "train",
                   "controller-uid": "7d0f5a3c-2b9e-4c61-9f7a-1e2d3c4b5a60",
                   "distenv.dev/inject": "true"},
        "annotations": {"batch.kubernetes.io/job-completion-index": str(index),
                        "distenv.dev/world-size": str(world),
                        "distenv.dev/frameworks": "pytorch,tensorflow,jax"},
        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "train",
                             "uid": "7d0f5a3c-2b9e-4c61-9f7a-1e2d3c4b5a60", "controller": True,
                             "blockOwnerDeletion": True}],
    }
    c = container("trainer", n_env, gpus=8)
    c["env"].insert(0, {"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
        "apiVersion": "v1",
        "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}})
    obj = {"metadata": meta, "spec": pod_spec([c], "train-%d" % index, "train", "Never"),
           "status": {}}
    return review(obj, "7e3b9d2a-0002-4f1c-8b2e-%012d" % world, "ml")


def dump(obj):
    return json.dumps(obj, separators=(",", ":")).encode()


def padded(make, target):
    """The largest n for which make(n) is at most target bytes."""
    n = 0
    while len(dump(make(n + 1))) <= target:
        n += 1
    return dump(make(n))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--world", type=int, action="append", default=[])
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    bodies = {
        "sts-4k.json": padded(lambda n: sts_review(1, n), 4096),
        "pod-64k.json": padded(lambda n: sts_review(12, n), 65536),
        "job-w1024.json": dump(job_review(1024)),
    }
    for w in a.world:
        bodies["job-w%d.json" % w] = dump(job_review(w))
    for name, data in bodies.items():
        with open(os.path.join(a.outdir, name), "wb") as f:
            f.write(data)
        print("%s %d" % (name, len(data)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
