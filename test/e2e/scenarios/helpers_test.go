package scenarios

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// clusterDomain is the domain of the names distenv writes. The host tier's
// webhook reads a resolv.conf with no svc.<domain> entry (hostResolvConf) and so
// falls back to cluster.local; the node tier's kubelet and CoreDNS serve
// $DISTENV_NODE_CLUSTER_DOMAIN (test/e2e-node/run.sh), which the chart, given
// no domain, reads from its pod's resolv.conf (setupNode sets it).
var clusterDomain = "cluster.local"

func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// newNamespace creates a fresh namespace for one test, waits for its default
// ServiceAccount, and deletes it when the test ends.
func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ctx := ctxT(t)
	ns, err := env.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-" + prefix + "-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() {
		if os.Getenv("DISTENV_E2E_KEEP") == "1" {
			return
		}
		_ = env.cs.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	if err := waitDefaultSA(ctx, ns.Name); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func headlessService(t *testing.T, ns, name string, selector map[string]string) {
	t.Helper()
	_, err := env.cs.CoreV1().Services(ns).Create(ctxT(t), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  selector,
			Ports:     []corev1.ServicePort{{Name: "rdzv", Port: 29500}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create headless Service %s: %v", name, err)
	}
}

func container(name string, env ...corev1.EnvVar) corev1.Container {
	return corev1.Container{Name: name, Image: "registry.invalid/trainer:1", Command: []string{"python", "train.py"}, Env: env}
}

func podTemplate(lbl map[string]string, ann map[string]string, cs ...corev1.Container) corev1.PodTemplateSpec {
	if len(cs) == 0 {
		cs = []corev1.Container{container("trainer")}
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: lbl, Annotations: ann},
		Spec:       corev1.PodSpec{Containers: cs},
	}
}

func statefulSet(name, svc string, replicas int32, tmpl corev1.PodTemplateSpec) *appsv1.StatefulSet {
	sel := map[string]string{"app": name}
	if tmpl.Labels == nil {
		tmpl.Labels = map[string]string{}
	}
	for k, v := range sel {
		tmpl.Labels[k] = v
	}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            &replicas,
			ServiceName:         svc,
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: sel},
			Template:            tmpl,
		},
	}
}

func indexedJob(name string, completions, parallelism int32, tmpl corev1.PodTemplateSpec) *batchv1.Job {
	mode := batchv1.IndexedCompletion
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			CompletionMode: &mode,
			Completions:    &completions,
			Parallelism:    &parallelism,
			Template:       tmpl,
		},
	}
}

func createSTS(t *testing.T, ns string, s *appsv1.StatefulSet) *appsv1.StatefulSet {
	t.Helper()
	out, err := env.cs.AppsV1().StatefulSets(ns).Create(ctxT(t), s, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create StatefulSet %s: %v", s.Name, err)
	}
	return out
}

func createJob(t *testing.T, ns string, j *batchv1.Job) *batchv1.Job {
	t.Helper()
	out, err := env.cs.BatchV1().Jobs(ns).Create(ctxT(t), j, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Job %s: %v", j.Name, err)
	}
	return out
}

// waitPods waits (bounded) until exactly n pods match the selector in ns and
// returns them sorted by name.
func waitPods(t *testing.T, ns string, selector map[string]string, n int, within time.Duration) []corev1.Pod {
	t.Helper()
	ctx := ctxT(t)
	sel := labels.SelectorFromSet(selector).String()
	deadline := time.Now().Add(within)
	var got []corev1.Pod
	for i := 0; i < 10000 && time.Now().Before(deadline); i++ {
		l, err := env.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			t.Fatalf("list pods: %v", err)
		}
		got = l.Items
		if len(got) == n {
			sort.Slice(got, func(i, j int) bool { return got[i].Name < got[j].Name })
			return got
		}
		if len(got) > n {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("namespace %s, selector %s: %d pods, want %d (events: %s)", ns, sel, len(got), n, eventSummary(t, ns))
	return nil
}

func eventSummary(t *testing.T, ns string) string {
	l, err := env.cs.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var b []string
	for _, e := range l.Items {
		b = append(b, fmt.Sprintf("%s/%s %s: %s", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message))
	}
	if len(b) > 10 {
		b = b[:10]
	}
	return strings.Join(b, "; ")
}

// waitEvent waits (bounded) for an event on the named object whose message
// contains want, and returns it.
func waitEvent(t *testing.T, ns, kind, name, reason, want string, within time.Duration) corev1.Event {
	t.Helper()
	ctx := ctxT(t)
	deadline := time.Now().Add(within)
	var seen []string
	for i := 0; i < 10000 && time.Now().Before(deadline); i++ {
		l, err := env.cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=" + kind + ",involvedObject.name=" + name})
		if err != nil {
			t.Fatalf("list events: %v", err)
		}
		seen = seen[:0]
		for _, e := range l.Items {
			if e.Reason == reason && strings.Contains(e.Message, want) {
				return e
			}
			seen = append(seen, e.Reason+": "+e.Message)
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("no %s event with %q on %s %s/%s within %v; events seen: %q", reason, want, kind, ns, name, within, seen)
	return corev1.Event{}
}

// expectation is what distenv must have injected into a pod (default
// frameworks pytorch and tensorflow, no elastic, one process per pod).
type expectation struct {
	ns, svc string
	hosts   []string // hostname of each rank, index = rank
	rank    int
	port    int
	nproc   int
	// user holds variables the container defines itself: they keep these values
	// and distenv must not add them again.
	user map[string]string
	// others are variables another admission webhook adds (LeaderWorkerSet's LWS_*):
	// left out of the order check, as they may come first.
	others map[string]bool
	// tf is the TF_CONFIG wanted when it is not one "worker" list of the hosts
	// (a JobSet whose replicated Jobs are named after TensorFlow roles).
	tf *tfConfig
}

func (e expectation) fqdn(h string) string {
	return fmt.Sprintf("%s.%s.%s.svc.%s", h, e.svc, e.ns, clusterDomain)
}

func (e expectation) vars() map[string]string {
	a := e.fqdn(e.hosts[0])
	p := strconv.Itoa(e.port)
	w := strconv.Itoa(len(e.hosts))
	r := strconv.Itoa(e.rank)
	n := e.nproc
	if n == 0 {
		n = 1
	}
	m := map[string]string{
		"MASTER_ADDR": a, "MASTER_PORT": p, "RANK": r, "WORLD_SIZE": w,
		"NODE_RANK": r, "NNODES": w, // pods, for Lightning, accelerate, SGLang, vLLM
		"PET_MASTER_ADDR": a, "PET_MASTER_PORT": p, "PET_NNODES": w, "PET_NODE_RANK": r,
		"PET_NPROC_PER_NODE": strconv.Itoa(n),
		"TF_CONFIG":          "", // checked as JSON, see tfConfig
	}
	// A container's own literal MASTER_ADDR/MASTER_PORT carries through to torchrun's
	// variables, so env:// and torchrun agree (README: "A container's own ...").
	if v, ok := e.user["MASTER_ADDR"]; ok {
		m["PET_MASTER_ADDR"] = v
	}
	if v, ok := e.user["MASTER_PORT"]; ok {
		m["PET_MASTER_PORT"] = v
	}
	return m
}

type tfConfig struct {
	Cluster map[string][]string `json:"cluster"`
	Task    struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
	} `json:"task"`
}

// notInjected are variables distenv must not add with the default settings.
var notInjected = []string{"JAX_COORDINATOR_ADDRESS", "JAX_NUM_PROCESSES", "JAX_PROCESS_ID",
	"PET_RDZV_BACKEND", "PET_RDZV_ENDPOINT", "PET_RDZV_ID", "PET_MAX_RESTARTS",
	// LOCAL_* only in a one-process pod (nproc-per-node 1, or a GPU limit of exactly 1),
	// which these are not; DMLC_* and PADDLE_* only when distenv.dev/frameworks asks
	"LOCAL_RANK", "LOCAL_WORLD_SIZE", "DMLC_TRACKER_URI", "PADDLE_MASTER"}

// checkInjected asserts the README's environment in every container of the pod,
// exactly once each, before the container's own entries; and the annotation.
func checkInjected(t *testing.T, pod *corev1.Pod, e expectation) {
	t.Helper()
	if _, ok := pod.Annotations[injectedAnn]; !ok {
		t.Errorf("pod %s: no %s annotation (annotations: %v)", pod.Name, injectedAnn, pod.Annotations)
	}
	want := e.vars()
	for _, c := range pod.Spec.Containers {
		var bad []string
		fail := func(format string, a ...any) { bad = append(bad, fmt.Sprintf(format, a...)) }
		// Injected entries come before the container's own entries.
		lastInjected, firstOwn := -1, len(c.Env)
		counts := map[string]int{}
		first := map[string]int{}
		for i, v := range c.Env {
			counts[v.Name]++
			if _, ok := first[v.Name]; !ok {
				first[v.Name] = i
			}
			if e.others[v.Name] {
				continue
			}
			_, injected := want[v.Name]
			if _, mine := e.user[v.Name]; mine {
				injected = false
			}
			if injected {
				lastInjected = i
			} else if i < firstOwn {
				firstOwn = i
			}
		}
		if lastInjected > firstOwn {
			fail("injected entries are not all before the container's own")
		}
		names := make([]string, 0, len(want))
		for name := range want {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if counts[name] != 1 {
				fail("%s appears %d times, want once", name, counts[name])
				continue
			}
			got := c.Env[first[name]]
			switch uv, mine := e.user[name]; {
			case got.ValueFrom != nil:
				fail("%s has valueFrom, want a value", name)
			case mine:
				if got.Value != uv {
					fail("%s=%q, want the container's own value %q", name, got.Value, uv)
				}
			case name == "TF_CONFIG":
				if msg := checkTFConfig(got.Value, e); msg != "" {
					fail("%s", msg)
				}
			case got.Value != want[name]:
				fail("%s=%q, want %q", name, got.Value, want[name])
			}
		}
		for _, name := range notInjected {
			if counts[name] != 0 {
				fail("unexpected %s", name)
			}
		}
		for name, n := range counts {
			if _, checked := want[name]; n > 1 && !checked {
				fail("%s duplicated %d times", name, n)
			}
		}
		if len(bad) > 0 {
			t.Errorf("pod %s container %s: %s\n\tenv %s", pod.Name, c.Name, strings.Join(bad, "; "), envString(c.Env))
		}
	}
}

func checkTFConfig(raw string, e expectation) string {
	var tf tfConfig
	if err := json.Unmarshal([]byte(raw), &tf); err != nil {
		return fmt.Sprintf("TF_CONFIG is not JSON: %v (%q)", err, raw)
	}
	if e.tf != nil {
		if !reflect.DeepEqual(tf, *e.tf) {
			return fmt.Sprintf("TF_CONFIG = %+v, want %+v", tf, *e.tf)
		}
		return ""
	}
	var workers []string
	for _, h := range e.hosts {
		workers = append(workers, fmt.Sprintf("%s:%d", e.fqdn(h), e.port))
	}
	if !reflect.DeepEqual(tf.Cluster, map[string][]string{"worker": workers}) {
		return fmt.Sprintf("TF_CONFIG cluster = %v, want worker %v", tf.Cluster, workers)
	}
	if tf.Task.Type != "worker" || tf.Task.Index != e.rank {
		return fmt.Sprintf("TF_CONFIG task = %+v, want worker/%d", tf.Task, e.rank)
	}
	return ""
}

func envString(env []corev1.EnvVar) string {
	var b []string
	for _, v := range env {
		if v.ValueFrom != nil {
			b = append(b, v.Name+"=<valueFrom>")
		} else {
			b = append(b, v.Name+"="+v.Value)
		}
	}
	return "[" + strings.Join(b, " ") + "]"
}

func envValue(c corev1.Container, name string) (string, int) {
	val, n := "", 0
	for _, v := range c.Env {
		if v.Name == name {
			val = v.Value
			n++
		}
	}
	return val, n
}

func hostnames(prefix string, start, n int) []string {
	var hs []string
	for i := 0; i < n; i++ {
		hs = append(hs, fmt.Sprintf("%s-%d", prefix, start+i))
	}
	return hs
}

func jobIndex(t *testing.T, p *corev1.Pod) int {
	t.Helper()
	s, ok := p.Annotations["batch.kubernetes.io/job-completion-index"]
	if !ok {
		t.Fatalf("pod %s has no job-completion-index annotation", p.Name)
	}
	i, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("pod %s: bad completion index %q", p.Name, s)
	}
	return i
}

// auditEvent is the part of an audit.k8s.io/v1 Event these tests read.
type auditEvent struct {
	Verb      string `json:"verb"`
	Stage     string `json:"stage"`
	ObjectRef struct {
		Resource  string `json:"resource"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceived time.Time         `json:"requestReceivedTimestamp"`
	StageTimestamp  time.Time         `json:"stageTimestamp"`
	Annotations     map[string]string `json:"annotations"`
}

// auditPodCreates returns the completed pod-create audit events of a namespace.
func auditPodCreates(t *testing.T, ns string) []auditEvent {
	t.Helper()
	f, err := os.Open(env.auditLog)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	defer f.Close()
	var out []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !strings.Contains(string(line), `"namespace":"`+ns+`"`) {
			continue
		}
		var ev auditEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("audit log line: %v", err)
		}
		if ev.Verb == "create" && ev.ObjectRef.Resource == "pods" && ev.ObjectRef.Namespace == ns &&
			ev.Stage == "ResponseComplete" {
			out = append(out, ev)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("audit log: %v", err)
	}
	return out
}

// mutationRecord is the value of a mutation.webhook.admission.k8s.io/round_R_index_I
// audit annotation.
type mutationRecord struct {
	Round         int
	Configuration string `json:"configuration"`
	Webhook       string `json:"webhook"`
	Mutated       bool   `json:"mutated"`
}

func mutationRecords(t *testing.T, ev auditEvent) []mutationRecord {
	t.Helper()
	const prefix = "mutation.webhook.admission.k8s.io/round_"
	var out []mutationRecord
	for k, v := range ev.Annotations {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		var m mutationRecord
		if err := json.Unmarshal([]byte(v), &m); err != nil {
			t.Fatalf("audit annotation %s=%q: %v", k, v, err)
		}
		round := strings.TrimPrefix(k, prefix)
		round = round[:strings.IndexByte(round, '_')]
		m.Round, _ = strconv.Atoi(round)
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Round < out[j].Round })
	return out
}
