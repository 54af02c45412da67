package scenarios

// Kueue's partial admission with its real manager (sigs.k8s.io/kueue v0.19.0,
// built by build-managers.sh and started by cluster.sh when
// DISTENV_E2E_MANAGERS names kueue): a ClusterQueue with 2 CPUs admits a 4-rank
// Indexed Job that asks for 1 CPU a pod and allows
// kueue.x-k8s.io/job-min-parallelism "2" with 2 pods.
//   - With kueue.x-k8s.io/job-completions-equal-parallelism "true", Kueue lowers
//     completions with parallelism: every pod gets one world of 2, ranks 0 and 1.
//   - Without it, `kubectl apply` prints distenv's warning naming the annotation;
//     Kueue's update (parallelism 2, completions 4) goes through /validate, and
//     the Job's pods are refused with a message naming it.

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const equalParallelism = "kueue.x-k8s.io/job-completions-equal-parallelism"

// kueueQueue makes a ResourceFlavor, a ClusterQueue of cpus CPUs and a
// LocalQueue "lq" in ns pointing at it (Kueue v1beta2), removed with the test.
func kueueQueue(t *testing.T, ns string, cpus int) {
	t.Helper()
	cq := "cq-" + ns
	objs := fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: rf-%[1]s}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: %[2]s}
spec:
  namespaceSelector:
    matchLabels: {kubernetes.io/metadata.name: %[1]s}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: rf-%[1]s
      resources:
      - {name: cpu, nominalQuota: %[3]d}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: %[1]s}
spec: {clusterQueue: %[2]s}
`, ns, cq, cpus)
	if _, stderr, err := kubectlIn(t, objs, "apply", "-f", "-"); err != nil {
		t.Fatalf("Kueue queue objects: %v: %s", err, stderr)
	}
	t.Cleanup(func() {
		_, _, _ = kubectlIn(t, "", "delete", "--wait=false", "clusterqueue/"+cq, "resourceflavor/rf-"+ns)
	})
}

// kueueJob is an opted-in Indexed Job of 4 ranks, 1 CPU a pod, in queue lq,
// with job-min-parallelism "2" and, when equal, job-completions-equal-parallelism.
func kueueJob(name string, equal bool) string {
	anns := `kueue.x-k8s.io/job-min-parallelism: "2"`
	if equal {
		anns += "\n    " + equalParallelism + `: "true"`
	}
	return fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata:
  name: %[1]s
  labels: {kueue.x-k8s.io/queue-name: lq}
  annotations:
    %[2]s
spec:
  completions: 4
  parallelism: 4
  completionMode: Indexed
  template:
    metadata:
      labels: {app: %[1]s, distenv.dev/inject: "true"}
    spec:
      subdomain: %[1]s
      restartPolicy: Never
      containers:
      - name: trainer
        image: registry.invalid/trainer:1
        resources:
          requests: {cpu: "1"}
`, name, anns)
}

func TestKueuePartialAdmissionOneWorld(t *testing.T) {
	needManager(t, "kueue")
	ns := newNamespace(t, "kueue-eq")
	headlessService(t, ns, "train", map[string]string{"app": "train"})
	registerValidating(t, ns)
	kueueQueue(t, ns, 2)

	_, stderr, err := kubectlIn(t, kueueJob("train", true), "-n", ns, "apply", "-f", "-")
	if err != nil {
		t.Fatalf("kubectl apply: %v: %s", err, stderr)
	}
	if strings.Contains(stderr, equalParallelism) {
		t.Errorf("kubectl apply with %s warned about it: %s", equalParallelism, stderr)
	}
	pods := waitPods(t, ns, map[string]string{"job-name": "train"}, 2, 90*time.Second)
	job, err := env.cs.BatchV1().Jobs(ns).Get(ctxT(t), "train", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if job.Spec.Completions == nil || *job.Spec.Completions != 2 || job.Spec.Parallelism == nil || *job.Spec.Parallelism != 2 {
		t.Fatalf("Kueue admitted the Job as completions %v parallelism %v, want 2 and 2 (a ClusterQueue of 2 CPUs)",
			job.Spec.Completions, job.Spec.Parallelism)
	}
	var ranks []int
	for _, p := range pods {
		c := p.Spec.Containers[0]
		ws, _ := envValue(c, "WORLD_SIZE")
		rank, _ := envValue(c, "RANK")
		if ws != "2" {
			t.Errorf("pod %s: WORLD_SIZE=%q, want 2 (the admitted completions); env %s", p.Name, ws, envString(c.Env))
		}
		r, err := strconv.Atoi(rank)
		if err != nil || r != jobIndex(t, &p) {
			t.Errorf("pod %s: RANK=%q, want its completion index %d", p.Name, rank, jobIndex(t, &p))
		}
		ranks = append(ranks, r)
	}
	sort.Ints(ranks)
	if fmt.Sprint(ranks) != "[0 1]" {
		t.Errorf("ranks %v, want [0 1], one world of 2", ranks)
	}
	t.Logf("Kueue admitted 2 of 4 ranks with %s: pods %s and %s, WORLD_SIZE=2, ranks %v",
		equalParallelism, pods[0].Name, pods[1].Name, ranks)
}

func TestKueuePartialAdmissionRefusedNamed(t *testing.T) {
	needManager(t, "kueue")
	ns := newNamespace(t, "kueue-noeq")
	headlessService(t, ns, "part", map[string]string{"app": "part"})
	registerValidating(t, ns)
	kueueQueue(t, ns, 2)

	_, stderr, err := kubectlIn(t, kueueJob("part", false), "-n", ns, "apply", "-f", "-")
	if err != nil {
		t.Fatalf("kubectl apply: %v: %s", err, stderr)
	}
	want := "Warning: distenv: their pods would be refused: add " + equalParallelism + `: "true"`
	if !strings.Contains(stderr, want) {
		t.Errorf("kubectl apply printed %q, want %q", stderr, want)
	}
	// Kueue starts the Job with parallelism 2: /validate lets its update through,
	// and /mutate refuses the pods, naming the annotation.
	ev := waitEvent(t, ns, "Job", "part", "FailedCreate", equalParallelism, 90*time.Second)
	t.Logf("FailedCreate: %s", ev.Message)
	job, err := env.cs.BatchV1().Jobs(ns).Get(ctxT(t), "part", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if job.Spec.Parallelism == nil || *job.Spec.Parallelism != 2 || job.Spec.Suspend == nil || *job.Spec.Suspend {
		t.Errorf("Kueue's admission: parallelism %v suspend %v, want 2 and false", job.Spec.Parallelism, job.Spec.Suspend)
	}
	pods, err := env.cs.CoreV1().Pods(ns).List(ctxT(t), metav1.ListOptions{LabelSelector: "job-name=part"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 0 {
		t.Errorf("%d pods stored, want none: %s", len(pods.Items), podNames(pods.Items))
	}
}

func podNames(ps []corev1.Pod) string {
	var n []string
	for _, p := range ps {
		n = append(n, p.Name)
	}
	return strings.Join(n, " ")
}
