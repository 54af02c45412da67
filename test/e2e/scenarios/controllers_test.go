package scenarios

// JobSet and LeaderWorkerSet with their real controller managers (started by
// cluster.sh when DISTENV_E2E_MANAGERS names them): the objects are written as
// users write them, the managers and kube-controller-manager make the pods, and
// the tests read what the API server stored.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

var (
	jobSetGVR = schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}
	lwsGVR    = schema.GroupVersionResource{Group: "leaderworkerset.x-k8s.io", Version: "v1", Resource: "leaderworkersets"}
)

const (
	jobSetNameLabel  = "jobset.sigs.k8s.io/jobset-name"
	jobSetRJobLabel  = "jobset.sigs.k8s.io/replicatedjob-name"
	jobSetUIDLabel   = "jobset.sigs.k8s.io/jobset-uid"
	jobSetJobIndex   = "jobset.sigs.k8s.io/job-index"
	jobSetCoordAnn   = "jobset.sigs.k8s.io/coordinator"
	lwsNameLabel     = "leaderworkerset.sigs.k8s.io/name"
	lwsGroupLabel    = "leaderworkerset.sigs.k8s.io/group-index"
	lwsWorkerLabel   = "leaderworkerset.sigs.k8s.io/worker-index"
	completionIdxAnn = "batch.kubernetes.io/job-completion-index"
)

// lwsEnv are the variables LeaderWorkerSet's own pod webhook adds (first in env).
var lwsEnv = map[string]bool{"LWS_LEADER_ADDRESS": true, "LWS_GROUP_SIZE": true, "LWS_WORKER_INDEX": true}

// needManager skips the test when cluster.sh did not start the named manager.
func needManager(t *testing.T, name string) {
	t.Helper()
	for _, m := range strings.Fields(os.Getenv("DISTENV_E2E_MANAGERS")) {
		if m == name {
			return
		}
	}
	t.Skipf("the %s controller manager is not running (DISTENV_E2E_MANAGERS=%q; test/e2e/run.sh runs it by default)",
		name, os.Getenv("DISTENV_E2E_MANAGERS"))
}

// createYAML creates the object written in doc (YAML, as a user writes it) in ns.
func createYAML(t *testing.T, ns string, gvr schema.GroupVersionResource, doc string) *unstructured.Unstructured {
	t.Helper()
	dc, err := dynamic.NewForConfig(env.admin)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
		t.Fatalf("test YAML: %v", err)
	}
	out, err := dc.Resource(gvr).Namespace(ns).Create(ctxT(t), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s %s: %v", obj.GetKind(), obj.GetName(), err)
	}
	return out
}

// waitService waits (bounded) for the Service a controller makes, and returns it.
func waitService(t *testing.T, ns, name string, within time.Duration) *corev1.Service {
	t.Helper()
	ctx := ctxT(t)
	deadline := time.Now().Add(within)
	var last error
	for i := 0; i < 10000 && time.Now().Before(deadline); i++ {
		s, err := env.cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			return s
		}
		last = err
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("Service %s/%s not made within %v: %v", ns, name, within, last)
	return nil
}

func labelInt(t *testing.T, p *corev1.Pod, m map[string]string, key string) int {
	t.Helper()
	v, ok := m[key]
	if !ok {
		t.Fatalf("pod %s has no %s", p.Name, key)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("pod %s: %s=%q is not a number", p.Name, key, v)
	}
	return n
}

// rjob is a replicated Job: jobs Jobs of pods pods each.
type rjob struct {
	name       string
	jobs, pods int
}

// jobSetHosts lists the JobSet's hosts in the order its controller lists the pods
// (replicated Jobs in spec order; pod i of Job j of replicated Job k is at
// first[k] + j*pods + i).
func jobSetHosts(js string, rjobs []rjob) (hosts []string, first map[string]int) {
	first = map[string]int{}
	for _, r := range rjobs {
		first[r.name] = len(hosts)
		for j := 0; j < r.jobs; j++ {
			for i := 0; i < r.pods; i++ {
				hosts = append(hosts, fmt.Sprintf("%s-%s-%d-%d", js, r.name, j, i))
			}
		}
	}
	return hosts, first
}

// jobSetRank is the README's rank of the pod at position pos when the coordinator's pod
// is at position coord (-1: none): the coordinator is rank 0 and every other pod
// keeps its order after it.
func jobSetRank(pos, coord int) int {
	switch {
	case coord < 0 || pos > coord:
		return pos
	case pos == coord:
		return 0
	}
	return pos + 1
}

// jobSetCheck is what checkJobSet asserts of a JobSet's pods.
type jobSetCheck struct {
	ns, js, subdomain string
	uid               string // the JobSet's uid: only its pods (a re-created JobSet)
	rjobs             []rjob
	coordinator       string // the host of spec.coordinator's pod: rank 0; "" when none
	tfRoles           bool   // replicated Jobs named after TensorFlow roles
}

// tfRolesConfig is the README's TF_CONFIG for a JobSet named after TensorFlow roles: one list
// per replicated Job, the pod's own role and its index in it.
func (c jobSetCheck) tfRolesConfig(hosts []string, first map[string]int, own string, rank int) *tfConfig {
	tf := &tfConfig{Cluster: map[string][]string{}}
	for _, r := range c.rjobs {
		for k := 0; k < r.jobs*r.pods; k++ {
			tf.Cluster[r.name] = append(tf.Cluster[r.name],
				fmt.Sprintf("%s.%s.%s.svc.%s:29500", hosts[first[r.name]+k], c.subdomain, c.ns, clusterDomain))
		}
	}
	tf.Task.Type, tf.Task.Index = own, rank-first[own]
	return tf
}

// checkJobSet asserts one world across all the JobSet's pods: ranks 0..W-1 once
// each in the README's order, the controller's hostname and subdomain for each rank, the
// README's environment, and one MASTER_ADDR. It returns the pods.
func checkJobSet(t *testing.T, c jobSetCheck) []corev1.Pod {
	t.Helper()
	ns, js, subdomain, rjobs := c.ns, c.js, c.subdomain, c.rjobs
	inOrder, first := jobSetHosts(js, rjobs)
	coord := -1
	for pos, h := range inOrder {
		if h == c.coordinator {
			coord = pos
		}
	}
	if c.coordinator != "" && coord < 0 {
		t.Fatalf("coordinator %s is not a pod of JobSet %s", c.coordinator, js)
	}
	hosts := make([]string, len(inOrder)) // by rank
	for pos, h := range inOrder {
		hosts[jobSetRank(pos, coord)] = h
	}
	sel := map[string]string{jobSetNameLabel: js}
	if c.uid != "" {
		sel[jobSetUIDLabel] = c.uid
	}
	pods := waitPods(t, ns, sel, len(hosts), podWait)
	byRJob := map[string]rjob{}
	for _, r := range rjobs {
		byRJob[r.name] = r
	}
	seen := map[int]string{}
	for i := range pods {
		p := &pods[i]
		r, ok := byRJob[p.Labels[jobSetRJobLabel]]
		if !ok {
			t.Fatalf("pod %s: replicated Job %q is not in the JobSet", p.Name, p.Labels[jobSetRJobLabel])
		}
		j := labelInt(t, p, p.Labels, jobSetJobIndex)
		idx := labelInt(t, p, p.Annotations, completionIdxAnn)
		rank := jobSetRank(first[r.name]+j*r.pods+idx, coord)
		if prev, dup := seen[rank]; dup {
			t.Errorf("pods %s and %s both have rank %d", prev, p.Name, rank)
		}
		seen[rank] = p.Name
		// The host distenv names for a rank is the one the Job controller gives the pod.
		if p.Spec.Hostname != hosts[rank] || p.Spec.Subdomain != subdomain {
			t.Errorf("pod %s: hostname %q subdomain %q, want %q %q", p.Name, p.Spec.Hostname, p.Spec.Subdomain,
				hosts[rank], subdomain)
		}
		e := expectation{ns: ns, svc: subdomain, hosts: hosts, rank: rank, port: 29500}
		if c.tfRoles {
			e.tf = c.tfRolesConfig(inOrder, first, r.name, first[r.name]+j*r.pods+idx)
		}
		checkInjected(t, p, e)
		if got, _ := envValue(p.Spec.Containers[0], "RANK"); got != strconv.Itoa(rank) {
			t.Errorf("pod %s (replicated Job %s, Job %d, index %d): RANK=%q, want %d", p.Name, r.name, j, idx, got, rank)
		}
	}
	if len(seen) != len(hosts) {
		t.Errorf("ranks %v, want 0..%d once each", seen, len(hosts)-1)
	}
	// One MASTER_ADDR for the whole JobSet.
	addrs := map[string]bool{}
	for i := range pods {
		a, _ := envValue(pods[i].Spec.Containers[0], "MASTER_ADDR")
		addrs[a] = true
	}
	if len(addrs) != 1 {
		t.Errorf("JobSet %s: %d distinct MASTER_ADDR values %v, want one", js, len(addrs), addrs)
	}
	return pods
}

// jobSetYAML is JobSet name as users write it: extra spec fields (YAML lines
// indented two spaces, each after a newline; "" for none), then spec.replicatedJobs
// made of the replicatedJobYAML entries rjobs.
func jobSetYAML(name, extra string, rjobs ...string) string {
	return "\napiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n  name: " + name +
		"\nspec:" + extra + "\n  replicatedJobs:" + strings.Join(rjobs, "") + "\n"
}

// replicatedJobYAML is one entry of a JobSet's spec.replicatedJobs as users write
// it: jobs Indexed Jobs (replicas; 0 leaves it out, the JobSet default of 1) of pods
// pods each, the pod template opted in.
func replicatedJobYAML(name string, jobs, pods int) string {
	replicas := ""
	if jobs > 0 {
		replicas = fmt.Sprintf("\n    replicas: %d", jobs)
	}
	return fmt.Sprintf(`
  - name: %s%s
    template:
      spec:
        parallelism: %d
        completions: %d
        backoffLimit: 0
        template:
          metadata:
            labels:
              distenv.dev/inject: "true"
          spec:
            restartPolicy: Never
            containers:
            - name: trainer
              image: registry.invalid/trainer:1
              command: [torchrun, train.py]`, name, replicas, pods, pods)
}

// A JobSet of two replicated Jobs of different sizes (2 Jobs of 2 pods, 1 Job of
// 3 pods) made by the real JobSet controller: one world of 7, ranks in
// spec.replicatedJobs order, MASTER_ADDR rank 0's host on the JobSet's own
// headless Service. distenv reads the replicated Jobs from the JobSet (look-ups on,
// get on jobsets granted).
func TestJobSetTwoReplicatedJobs(t *testing.T) {
	needManager(t, "jobset")
	ns := newNamespace(t, "jobset")
	createYAML(t, ns, jobSetGVR, jobSetYAML("train", "", replicatedJobYAML("a", 2, 2), replicatedJobYAML("b", 1, 3)))
	// The JobSet controller makes the headless Service named after the subdomain.
	svc := waitService(t, ns, "train", podWait)
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || !svc.Spec.PublishNotReadyAddresses {
		t.Errorf("Service train: clusterIP %q publishNotReadyAddresses %v, want None true (the JobSet webhook's defaults)",
			svc.Spec.ClusterIP, svc.Spec.PublishNotReadyAddresses)
	}
	pods := checkJobSet(t, jobSetCheck{ns: ns, js: "train", subdomain: "train", rjobs: []rjob{{"a", 2, 2}, {"b", 1, 3}}})
	for _, p := range pods {
		if got, _ := envValue(p.Spec.Containers[0], "MASTER_ADDR"); got != "train-a-0-0.train."+ns+".svc."+clusterDomain {
			t.Errorf("pod %s: MASTER_ADDR=%q, want train-a-0-0.train.%s.svc.%s", p.Name, got, ns, clusterDomain)
		}
		if got, _ := envValue(p.Spec.Containers[0], "WORLD_SIZE"); got != "7" {
			t.Errorf("pod %s: WORLD_SIZE=%q, want 7", p.Name, got)
		}
	}
}

// JobSet's own coordinator example (examples/coordinator): a replicated Job of 4
// workers, then a driver, the coordinator. The driver's pod is rank 0 and
// MASTER_ADDR on every pod (torch's TCPStore, JAX's coordination service and
// XGBoost's tracker live on rank 0); the workers are ranks 1..4 in their order.
func TestJobSetCoordinatorExample(t *testing.T) {
	needManager(t, "jobset")
	ns := newNamespace(t, "jobsetdriver")
	createYAML(t, ns, jobSetGVR, jobSetYAML("coord", `
  coordinator:
    replicatedJob: driver
    jobIndex: 0
    podIndex: 0`, replicatedJobYAML("workers", 0, 4), replicatedJobYAML("driver", 0, 1)))
	waitService(t, ns, "coord", podWait)
	pods := checkJobSet(t, jobSetCheck{ns: ns, js: "coord", subdomain: "coord",
		rjobs: []rjob{{"workers", 1, 4}, {"driver", 1, 1}}, coordinator: "coord-driver-0-0"})
	checkRanksByHost(t, pods, map[string]string{"coord-driver-0-0": "0", "coord-workers-0-0": "1", "coord-workers-0-3": "4"},
		"coord-driver-0-0.coord."+ns+".svc."+clusterDomain)
}

// checkRanksByHost asserts, written out rather than derived as checkJobSet derives
// them, the RANK of the pods with the given hostnames and MASTER_ADDR on every pod.
func checkRanksByHost(t *testing.T, pods []corev1.Pod, ranks map[string]string, master string) {
	t.Helper()
	for _, p := range pods {
		want, named := ranks[p.Spec.Hostname]
		if got, _ := envValue(p.Spec.Containers[0], "RANK"); named && got != want {
			t.Errorf("pod %s: RANK=%q, want %s", p.Name, got, want)
		}
		if got, _ := envValue(p.Spec.Containers[0], "MASTER_ADDR"); got != master {
			t.Errorf("pod %s: MASTER_ADDR=%q, want the coordinator %s", p.Name, got, master)
		}
	}
}

// A JobSet with spec.coordinator in the middle and its own network subdomain: the
// coordinator's pod is rank 0 and MASTER_ADDR, the pods listed before it move one
// rank up, the pods after it keep theirs.
func TestJobSetCoordinator(t *testing.T) {
	needManager(t, "jobset")
	ns := newNamespace(t, "jobsetcoord")
	createYAML(t, ns, jobSetGVR, jobSetYAML("coord", `
  network:
    subdomain: rdzv
  coordinator:
    replicatedJob: workers
    jobIndex: 1
    podIndex: 0`, replicatedJobYAML("driver", 0, 1), replicatedJobYAML("workers", 2, 2)))
	waitService(t, ns, "rdzv", podWait)
	pods := checkJobSet(t, jobSetCheck{ns: ns, js: "coord", subdomain: "rdzv",
		rjobs: []rjob{{"driver", 1, 1}, {"workers", 2, 2}}, coordinator: "coord-workers-1-0"})
	for _, p := range pods {
		// The controller's own label says the same.
		if got := p.Annotations[jobSetCoordAnn]; got != "coord-workers-1-0.rdzv" {
			t.Errorf("pod %s: %s=%q, want coord-workers-1-0.rdzv", p.Name, jobSetCoordAnn, got)
		}
	}
	checkRanksByHost(t, pods, map[string]string{"coord-workers-1-0": "0", "coord-driver-0-0": "1", "coord-workers-0-0": "2",
		"coord-workers-0-1": "3", "coord-workers-1-1": "4"}, "coord-workers-1-0.rdzv."+ns+".svc."+clusterDomain)
}

// A LeaderWorkerSet of 2 groups of 4 made by the real LeaderWorkerSet controller
// (leader StatefulSet, one worker StatefulSet per group, its own pod webhook adding
// labels and LWS_* env): one world per group, the leader rank 0, worker i rank i,
// MASTER_ADDR the group's leader.
func TestLeaderWorkerSetGroups(t *testing.T) {
	needManager(t, "lws")
	ns := newNamespace(t, "lws")
	createYAML(t, ns, lwsGVR, `
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: serve
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 4
    leaderTemplate:
      metadata:
        labels:
          distenv.dev/inject: "true"
      spec:
        containers:
        - name: trainer
          image: registry.invalid/trainer:1
          command: [torchrun, train.py]
    workerTemplate:
      metadata:
        labels:
          distenv.dev/inject: "true"
      spec:
        containers:
        - name: trainer
          image: registry.invalid/trainer:1
          command: [torchrun, train.py]
`)
	svc := waitService(t, ns, "serve", podWait)
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("Service serve: clusterIP %q, want None", svc.Spec.ClusterIP)
	}
	pods := waitPods(t, ns, map[string]string{lwsNameLabel: "serve"}, 8, podWait)
	masters := map[int]map[string]bool{}
	ranks := map[int]map[int]string{}
	for i := range pods {
		p := &pods[i]
		g := labelInt(t, p, p.Labels, lwsGroupLabel)
		w := labelInt(t, p, p.Labels, lwsWorkerLabel)
		hosts := []string{fmt.Sprintf("serve-%d", g)}
		hosts = append(hosts, hostnames(fmt.Sprintf("serve-%d", g), 1, 3)...)
		if p.Name != hosts[w] || p.Spec.Subdomain != "serve" {
			t.Errorf("pod %s (group %d, worker %d): subdomain %q, want pod %s on serve", p.Name, g, w, p.Spec.Subdomain, hosts[w])
		}
		checkInjected(t, p, expectation{ns: ns, svc: "serve", hosts: hosts, rank: w, port: 29500, others: lwsEnv})
		c := p.Spec.Containers[0]
		a, _ := envValue(c, "MASTER_ADDR")
		if masters[g] == nil {
			masters[g], ranks[g] = map[string]bool{}, map[int]string{}
		}
		masters[g][a] = true
		if prev, dup := ranks[g][w]; dup {
			t.Errorf("group %d: pods %s and %s both have rank %d", g, prev, p.Name, w)
		}
		ranks[g][w] = p.Name
		// LWS's own variables agree with distenv's.
		if l, n := envValue(c, "LWS_LEADER_ADDRESS"); n != 1 || !strings.HasPrefix(a, l+".") {
			t.Errorf("pod %s: LWS_LEADER_ADDRESS=%q (%d entries), MASTER_ADDR=%q: want the same leader", p.Name, l, n, a)
		}
		if s, _ := envValue(c, "LWS_GROUP_SIZE"); s != "4" {
			t.Errorf("pod %s: LWS_GROUP_SIZE=%q, want 4", p.Name, s)
		}
	}
	if len(masters) != 2 {
		t.Fatalf("groups %v, want 0 and 1", masters)
	}
	for g := 0; g < 2; g++ {
		want := fmt.Sprintf("serve-%d.serve.%s.svc.%s", g, ns, clusterDomain)
		if len(masters[g]) != 1 || !masters[g][want] {
			t.Errorf("group %d: MASTER_ADDR values %v, want only %s", g, masters[g], want)
		}
		if len(ranks[g]) != 4 {
			t.Errorf("group %d: ranks %v, want 0..3 once each", g, ranks[g])
		}
	}
}

// A LeaderWorkerSet written with only a workerTemplate (the leader uses it too) and
// subdomainPolicy UniquePerReplica: the controller makes one headless Service per
// group, named after the leader (<lws>-<g>), and the LWS pod webhook moves the
// leader's spec.subdomain onto it after distenv has answered; MASTER_ADDR is the
// leader on its group's Service.
func TestLeaderWorkerSetUniquePerReplica(t *testing.T) {
	needManager(t, "lws")
	ns := newNamespace(t, "lwsuniq")
	createYAML(t, ns, lwsGVR, `
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: uniq
spec:
  replicas: 2
  networkConfig:
    subdomainPolicy: UniquePerReplica
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      metadata:
        labels:
          distenv.dev/inject: "true"
      spec:
        containers:
        - name: trainer
          image: registry.invalid/trainer:1
`)
	pods := waitPods(t, ns, map[string]string{lwsNameLabel: "uniq"}, 4, podWait)
	for g := 0; g < 2; g++ {
		waitService(t, ns, fmt.Sprintf("uniq-%d", g), podWait)
	}
	for i := range pods {
		p := &pods[i]
		g := labelInt(t, p, p.Labels, lwsGroupLabel)
		w := labelInt(t, p, p.Labels, lwsWorkerLabel)
		svc := fmt.Sprintf("uniq-%d", g)
		hosts := []string{svc, svc + "-1"}
		if p.Name != hosts[w] || p.Spec.Subdomain != svc {
			t.Errorf("pod %s (group %d, worker %d): subdomain %q, want pod %s on %s", p.Name, g, w, p.Spec.Subdomain,
				hosts[w], svc)
		}
		checkInjected(t, p, expectation{ns: ns, svc: svc, hosts: hosts, rank: w, port: 29500, others: lwsEnv})
		want := fmt.Sprintf("%s.%s.%s.svc.%s", svc, svc, ns, clusterDomain)
		if a, _ := envValue(p.Spec.Containers[0], "MASTER_ADDR"); a != want {
			t.Errorf("pod %s: MASTER_ADDR=%q, want %s", p.Name, a, want)
		}
		if l, _ := envValue(p.Spec.Containers[0], "LWS_LEADER_ADDRESS"); l != svc+"."+svc+"."+ns {
			t.Errorf("pod %s: LWS_LEADER_ADDRESS=%q, want %s.%s.%s", p.Name, l, svc, svc, ns)
		}
	}
}

// A JobSet whose replicated Jobs are TensorFlow's roles (chief 1 × 1, worker 2 × 2,
// ps 1 × 1): TF_CONFIG has one list per role, in spec order, and each pod's task is
// its role and its index in that role; ranks and MASTER_ADDR as for any JobSet.
func TestJobSetTensorFlowRoles(t *testing.T) {
	needManager(t, "jobset")
	ns := newNamespace(t, "jobsettf")
	createYAML(t, ns, jobSetGVR, jobSetYAML("tf", "", replicatedJobYAML("chief", 1, 1),
		replicatedJobYAML("worker", 2, 2), replicatedJobYAML("ps", 1, 1)))
	checkJobSet(t, jobSetCheck{ns: ns, js: "tf", subdomain: "tf",
		rjobs: []rjob{{"chief", 1, 1}, {"worker", 2, 2}, {"ps", 1, 1}}, tfRoles: true})
}

// Re-running a JobSet the usual way — delete it and create it again under the same
// name with other replicated Jobs — within the webhook's look-up cache TTL: the new
// JobSet's pods get the new world (distenv uses a cached JobSet only for the uid
// the pod's jobset-uid label names), and no pod creation is refused.
func TestJobSetRecreatedGetsTheNewWorld(t *testing.T) {
	needManager(t, "jobset")
	ns := newNamespace(t, "jobsetrerun")
	old := createYAML(t, ns, jobSetGVR, jobSetYAML("rerun", "", replicatedJobYAML("w", 1, 2)))
	checkJobSet(t, jobSetCheck{ns: ns, js: "rerun", subdomain: "rerun", uid: string(old.GetUID()),
		rjobs: []rjob{{"w", 1, 2}}})
	dc, err := dynamic.NewForConfig(env.admin)
	if err != nil {
		t.Fatal(err)
	}
	fg := metav1.DeletePropagationForeground
	if err := dc.Resource(jobSetGVR).Namespace(ns).Delete(ctxT(t), "rerun",
		metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
		t.Fatalf("delete JobSet: %v", err)
	}
	// Bounded wait until the old JobSet is gone (its Jobs and pods with it).
	for i := 0; ; i++ {
		if _, err := dc.Resource(jobSetGVR).Namespace(ns).Get(ctxT(t), "rerun", metav1.GetOptions{}); err != nil {
			break
		}
		if i > 200 {
			t.Fatalf("the old JobSet was not deleted within 60 s")
		}
		time.Sleep(300 * time.Millisecond)
	}
	created := createYAML(t, ns, jobSetGVR, jobSetYAML("rerun", "", replicatedJobYAML("w", 2, 2), replicatedJobYAML("x", 1, 1)))
	if created.GetUID() == old.GetUID() {
		t.Fatalf("the new JobSet has the old uid")
	}
	checkJobSet(t, jobSetCheck{ns: ns, js: "rerun", subdomain: "rerun", uid: string(created.GetUID()),
		rjobs: []rjob{{"w", 2, 2}, {"x", 1, 1}}})
	if ev := eventSummary(t, ns); strings.Contains(ev, "FailedCreate") {
		t.Errorf("a pod creation was refused: %s", ev)
	}
}
