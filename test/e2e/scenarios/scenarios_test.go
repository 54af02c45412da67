package scenarios

import (
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

const podWait = 2 * time.Minute

var optIn = map[string]string{injectLabel: "true"}

func with(m map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// Scenario 1: a 4-replica StatefulSet (Parallel) behind a headless Service: every
// pod gets the README's environment, with the world size read from the API.
func TestStatefulSetParallel(t *testing.T) {
	ns := newNamespace(t, "sts")
	headlessService(t, ns, "ddp", map[string]string{"app": "ddp"})
	createSTS(t, ns, statefulSet("ddp", "ddp", 4, podTemplate(with(optIn), nil)))
	pods := waitPods(t, ns, map[string]string{"app": "ddp"}, 4, podWait)
	hosts := hostnames("ddp", 0, 4)
	for i := range pods {
		p := &pods[i]
		if p.Name != hosts[i] {
			t.Fatalf("pod %d is %s, want %s", i, p.Name, hosts[i])
		}
		if _, ok := p.Annotations["distenv.dev/world-size"]; ok {
			t.Fatalf("pod %s has a world-size annotation; the world size must come from the API", p.Name)
		}
		checkInjected(t, p, expectation{ns: ns, svc: "ddp", hosts: hosts, rank: i, port: 29500})
	}
	// The README's example, spelled out: ddp-2.
	c := pods[2].Spec.Containers[0]
	for name, want := range map[string]string{
		"MASTER_ADDR": "ddp-0.ddp." + ns + ".svc." + clusterDomain, "MASTER_PORT": "29500", "RANK": "2", "WORLD_SIZE": "4",
	} {
		if got, n := envValue(c, name); n != 1 || got != want {
			t.Errorf("ddp-2: %s=%q (%d entries), want %q once", name, got, n, want)
		}
	}
}

// Scenario 2: .spec.ordinals.start = 1: rank 0 is the pod with ordinal 1.
func TestStatefulSetOrdinalsStart(t *testing.T) {
	ns := newNamespace(t, "ordinals")
	headlessService(t, ns, "ddp", map[string]string{"app": "ddp"})
	s := statefulSet("ddp", "ddp", 3, podTemplate(with(optIn), nil))
	s.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 1}
	createSTS(t, ns, s)
	pods := waitPods(t, ns, map[string]string{"app": "ddp"}, 3, podWait)
	hosts := hostnames("ddp", 1, 3)
	for i := range pods {
		if pods[i].Name != hosts[i] {
			t.Fatalf("pod %d is %s, want %s", i, pods[i].Name, hosts[i])
		}
		checkInjected(t, &pods[i], expectation{ns: ns, svc: "ddp", hosts: hosts, rank: i, port: 29500})
	}
	if got, _ := envValue(pods[0].Spec.Containers[0], "RANK"); got != "0" {
		t.Errorf("ddp-1: RANK=%q, want 0", got)
	}
}

// Scenario 3a: Indexed Job, completions = parallelism = 3, spec.subdomain set.
func TestIndexedJob(t *testing.T) {
	ns := newNamespace(t, "job")
	headlessService(t, ns, "workers", map[string]string{"job-name": "train"})
	tmpl := podTemplate(with(optIn), nil)
	tmpl.Spec.Subdomain = "workers"
	createJob(t, ns, indexedJob("train", 3, 3, tmpl))
	pods := waitPods(t, ns, map[string]string{"job-name": "train"}, 3, podWait)
	hosts := hostnames("train", 0, 3)
	seen := map[int]bool{}
	for i := range pods {
		p := &pods[i]
		r := jobIndex(t, p)
		seen[r] = true
		if p.Spec.Hostname != hosts[r] || p.Spec.Subdomain != "workers" {
			t.Errorf("pod %s: hostname %q subdomain %q, want %q workers", p.Name, p.Spec.Hostname, p.Spec.Subdomain, hosts[r])
		}
		checkInjected(t, p, expectation{ns: ns, svc: "workers", hosts: hosts, rank: r, port: 29500})
		// The controller's own JOB_COMPLETION_INDEX stays, once.
		if _, n := envValue(p.Spec.Containers[0], "JOB_COMPLETION_INDEX"); n != 1 {
			t.Errorf("pod %s: JOB_COMPLETION_INDEX appears %d times, want once", p.Name, n)
		}
	}
	if len(seen) != 3 {
		t.Errorf("completion indexes %v, want 0,1,2", seen)
	}
}

// Scenario 3b: a Job that names its Service with distenv.dev/service instead of
// spec.subdomain: distenv sets spec.subdomain.
func TestIndexedJobServiceAnnotation(t *testing.T) {
	ns := newNamespace(t, "jobsvc")
	headlessService(t, ns, "rdzv", map[string]string{"job-name": "train"})
	tmpl := podTemplate(with(optIn), map[string]string{"distenv.dev/service": "rdzv"})
	createJob(t, ns, indexedJob("train", 2, 2, tmpl))
	pods := waitPods(t, ns, map[string]string{"job-name": "train"}, 2, podWait)
	hosts := hostnames("train", 0, 2)
	for i := range pods {
		p := &pods[i]
		if p.Spec.Subdomain != "rdzv" {
			t.Errorf("pod %s: spec.subdomain = %q, want rdzv (from distenv.dev/service)", p.Name, p.Spec.Subdomain)
		}
		checkInjected(t, p, expectation{ns: ns, svc: "rdzv", hosts: hosts, rank: jobIndex(t, p), port: 29500})
	}
}

// Scenario 4: pods without the label are untouched; a labelled Deployment's pods
// are refused and the refusal shows in the ReplicaSet's events.
func TestUnlabelledUntouchedAndDeploymentRefused(t *testing.T) {
	ns := newNamespace(t, "optin")
	ctx := ctxT(t)
	userEnv := []corev1.EnvVar{{Name: "FOO", Value: "bar"}}

	// An unlabelled bare pod and an unlabelled StatefulSet.
	bare, err := env.cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "plain"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{container("c", userEnv...)}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create unlabelled pod: %v", err)
	}
	headlessService(t, ns, "plain", map[string]string{"app": "plainsts"})
	createSTS(t, ns, statefulSet("plainsts", "plain", 2, podTemplate(nil, nil, container("c", userEnv...))))
	pods := waitPods(t, ns, map[string]string{"app": "plainsts"}, 2, podWait)
	for _, p := range append(pods, *bare) {
		if _, ok := p.Annotations[injectedAnn]; ok {
			t.Errorf("unlabelled pod %s has %s", p.Name, injectedAnn)
		}
		if got := envString(p.Spec.Containers[0].Env); got != "[FOO=bar]" {
			t.Errorf("unlabelled pod %s: env %s, want [FOO=bar]", p.Name, got)
		}
	}

	// A labelled Deployment: not a StatefulSet or Indexed Job, so refused.
	replicas := int32(2)
	sel := map[string]string{"app": "web"}
	_, err = env.cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: podTemplate(with(optIn, "app", "web"), nil),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Deployment: %v", err)
	}
	var rsName string
	for i := 0; i < 480 && rsName == ""; i++ {
		l, err := env.cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(sel).String()})
		if err != nil {
			t.Fatalf("list ReplicaSets: %v", err)
		}
		if len(l.Items) > 0 {
			rsName = l.Items[0].Name
		} else {
			time.Sleep(250 * time.Millisecond)
		}
	}
	if rsName == "" {
		t.Fatalf("the Deployment got no ReplicaSet within 2 min (events: %s)", eventSummary(t, ns))
	}
	ev := waitEvent(t, ns, "ReplicaSet", rsName, "FailedCreate", "distenv:", podWait)
	t.Logf("ReplicaSet event: %s", ev.Message)
	if !strings.Contains(ev.Message, webhookName) || !strings.Contains(ev.Message, "denied") {
		t.Errorf("refusal event does not say that %s denied the pod: %q", webhookName, ev.Message)
	}
	l, err := env.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 0 {
		t.Errorf("the labelled Deployment has %d pods stored, want 0", len(l.Items))
	}
	// Stop the ReplicaSet from retrying against the webhook for the rest of the run.
	_ = env.cs.AppsV1().Deployments(ns).Delete(ctx, "web", metav1.DeleteOptions{})
}

// Scenario 5: a container that sets a variable itself keeps its value, once.
func TestUserValueWins(t *testing.T) {
	ns := newNamespace(t, "uservalue")
	headlessService(t, ns, "ddp", map[string]string{"app": "ddp"})
	user := []corev1.EnvVar{
		{Name: "MASTER_PORT", Value: "12345"},
		{Name: "SCRIPT_ARGS", Value: "--master $(MASTER_ADDR)"},
	}
	tmpl := podTemplate(with(optIn), nil, container("trainer", user...), container("sidecar"))
	createSTS(t, ns, statefulSet("ddp", "ddp", 2, tmpl))
	pods := waitPods(t, ns, map[string]string{"app": "ddp"}, 2, podWait)
	hosts := hostnames("ddp", 0, 2)
	for i := range pods {
		p := &pods[i]
		// The trainer container keeps MASTER_PORT=12345 and PET_MASTER_PORT follows it;
		// other variables as usual (TF_CONFIG lists every rank's own port).
		trainer := *p
		trainer.Spec.Containers = p.Spec.Containers[:1]
		checkInjected(t, &trainer, expectation{ns: ns, svc: "ddp", hosts: hosts, rank: i, port: 29500,
			user: map[string]string{"MASTER_PORT": "12345"}})
		if got, n := envValue(p.Spec.Containers[0], "SCRIPT_ARGS"); n != 1 || got != "--master $(MASTER_ADDR)" {
			t.Errorf("pod %s: SCRIPT_ARGS=%q (%d entries)", p.Name, got, n)
		}
		// The sidecar, which sets nothing, gets everything, including the default port.
		sidecar := *p
		sidecar.Spec.Containers = p.Spec.Containers[1:]
		checkInjected(t, &sidecar, expectation{ns: ns, svc: "ddp", hosts: hosts, rank: i, port: 29500})
	}
}

// Scenario 6: a second mutating webhook, called after distenv, changes the pod;
// the API server calls distenv again (reinvocationPolicy IfNeeded) and nothing is
// duplicated.
func TestReinvocationNoDuplicates(t *testing.T) {
	second := startSecondWebhook(t)
	ns := newNamespace(t, "reinvoke")
	headlessService(t, ns, "ddp", map[string]string{"app": "ddp"})
	lbl := with(optIn, secondWebhookLabel, "true")
	createSTS(t, ns, statefulSet("ddp", "ddp", 2, podTemplate(lbl, nil, container("trainer", corev1.EnvVar{Name: "X", Value: "1"}))))
	pods := waitPods(t, ns, map[string]string{"app": "ddp"}, 2, podWait)
	hosts := hostnames("ddp", 0, 2)
	for i := range pods {
		p := &pods[i]
		if p.Annotations[secondWebhookAnn] != "yes" {
			t.Errorf("pod %s: the second webhook's annotation is missing: %v", p.Name, p.Annotations)
		}
		checkInjected(t, p, expectation{ns: ns, svc: "ddp", hosts: hosts, rank: i, port: 29500})
	}
	if n := second.callsWithDistenvEnv(); n < 2 {
		t.Errorf("the second webhook saw distenv's variables in %d requests, want ≥ 2 (distenv must run first)", n)
	}

	// The audit log shows the reinvocation round: distenv called again, no change.
	var evs []auditEvent
	for i := 0; i < 40; i++ {
		if evs = auditPodCreates(t, ns); len(evs) >= 2 {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	created := 0
	for _, ev := range evs {
		if ev.ResponseStatus.Code != 201 {
			continue
		}
		created++
		recs := mutationRecords(t, ev)
		var reinvoked, firstMutated bool
		for _, r := range recs {
			if r.Configuration != webhookConfName {
				continue
			}
			if r.Round == 0 && r.Mutated {
				firstMutated = true
			}
			if r.Round == 1 {
				reinvoked = true
				if r.Mutated {
					t.Errorf("pod create %s/%s: distenv changed the pod again when reinvoked: %+v", ns, ev.ObjectRef.Name, r)
				}
			}
		}
		if !firstMutated || !reinvoked {
			t.Errorf("pod create %s/%s: audit mutation records %+v: want distenv mutating in round 0 and reinvoked in round 1",
				ns, ev.ObjectRef.Name, recs)
		}
	}
	if created != 2 {
		t.Errorf("audit log has %d successful pod creates in %s, want 2", created, ns)
	}
}

// Scenario 7: server-side dry-run of a labelled pod goes through distenv
// (sideEffects None) and stores nothing.
func TestServerSideDryRun(t *testing.T) {
	ns := newNamespace(t, "dryrun")
	ctx := ctxT(t)
	headlessService(t, ns, "dry", map[string]string{"app": "dry"})
	// OrderedReady with no kubelet: only dry-0 is ever created, so dry-2 is free.
	s := statefulSet("dry", "dry", 3, podTemplate(with(optIn), nil))
	s.Spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	sts := createSTS(t, ns, s)
	waitPods(t, ns, map[string]string{"app": "dry"}, 1, podWait)

	ctrl := true
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:   "dry-2",
			Labels: with(optIn, "app", "dry", "apps.kubernetes.io/pod-index", "2"),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "dry",
				UID: sts.UID, Controller: &ctrl}},
		},
		Spec: corev1.PodSpec{Hostname: "dry-2", Subdomain: "dry", Containers: []corev1.Container{container("trainer")}},
	}
	out, err := env.cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("dry-run create: %v", err)
	}
	checkInjected(t, out, expectation{ns: ns, svc: "dry", hosts: hostnames("dry", 0, 3), rank: 2, port: 29500})
	if _, err := env.cs.CoreV1().Pods(ns).Get(ctx, "dry-2", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after a dry-run, GET dry-2 = %v, want NotFound", err)
	}
}

// Scenario 9: a non-indexed Job with the label: its pods are refused with the
// README's message (what is supported).
func TestNonIndexedJobRefused(t *testing.T) {
	ns := newNamespace(t, "nonindexed")
	ctx := ctxT(t)
	completions := int32(2)
	tmpl := podTemplate(with(optIn), nil)
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	tmpl.Spec.Subdomain = "workers"
	nonIndexed := batchv1.NonIndexedCompletion
	createJob(t, ns, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "plain"},
		Spec:       batchv1.JobSpec{CompletionMode: &nonIndexed, Completions: &completions, Parallelism: &completions, Template: tmpl},
	})
	ev := waitEvent(t, ns, "Job", "plain", "FailedCreate", "distenv:", podWait)
	t.Logf("Job event: %s", ev.Message)
	msg := ev.Message[strings.Index(ev.Message, "distenv:"):]
	if !strings.Contains(ev.Message, "denied the request: distenv:") {
		t.Errorf("refusal does not start with distenv: %q", ev.Message)
	}
	// What is supported, for a Job: Indexed completion mode.
	if !strings.Contains(msg, "Indexed") {
		t.Errorf("refusal does not say that Indexed Jobs are what is supported: %q", msg)
	}
	l, err := env.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=plain"})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 0 {
		t.Errorf("the non-indexed Job has %d pods stored, want 0", len(l.Items))
	}
	bg := metav1.DeletePropagationBackground
	_ = env.cs.BatchV1().Jobs(ns).Delete(ctx, "plain", metav1.DeleteOptions{PropagationPolicy: &bg})
}

// Beyond the nine: the optional annotations as the API server stores the pod:
// frameworks pytorch+jax, another port, injection into one named container only,
// processes per pod from the GPU limit; init containers untouched.
func TestAnnotationsThroughAPIServer(t *testing.T) {
	ns := newNamespace(t, "annotations")
	headlessService(t, ns, "ddp", map[string]string{"app": "ddp"})
	trainer := container("trainer")
	trainer.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}
	tmpl := podTemplate(with(optIn), map[string]string{
		"distenv.dev/frameworks": "pytorch,jax",
		"distenv.dev/port":       "23456",
		"distenv.dev/containers": "trainer",
	}, trainer, container("sidecar", corev1.EnvVar{Name: "ROLE", Value: "logs"}))
	tmpl.Spec.InitContainers = []corev1.Container{container("setup")}
	createSTS(t, ns, statefulSet("ddp", "ddp", 3, tmpl))
	pods := waitPods(t, ns, map[string]string{"app": "ddp"}, 3, podWait)
	a := "ddp-0.ddp." + ns + ".svc." + clusterDomain
	for i := range pods {
		p := &pods[i]
		r := strconv.Itoa(i)
		c := p.Spec.Containers[0]
		for name, want := range map[string]string{
			"MASTER_ADDR": a, "MASTER_PORT": "23456", "RANK": r, "WORLD_SIZE": "3",
			"PET_NPROC_PER_NODE": "2", "PET_NNODES": "3", "PET_NODE_RANK": r,
			"NODE_RANK": r, "NNODES": "3",
			"JAX_COORDINATOR_ADDRESS": a + ":23456", "JAX_NUM_PROCESSES": "3", "JAX_PROCESS_ID": r,
		} {
			if got, n := envValue(c, name); n != 1 || got != want {
				t.Errorf("pod %s trainer: %s=%q (%d entries), want %q once", p.Name, name, got, n, want)
			}
		}
		if _, n := envValue(c, "TF_CONFIG"); n != 0 {
			t.Errorf("pod %s trainer: TF_CONFIG set although frameworks is pytorch,jax", p.Name)
		}
		if got := envString(p.Spec.Containers[1].Env); got != "[ROLE=logs]" {
			t.Errorf("pod %s sidecar (not in distenv.dev/containers): env %s, want [ROLE=logs]", p.Name, got)
		}
		if got := envString(p.Spec.InitContainers[0].Env); got != "[]" {
			t.Errorf("pod %s init container: env %s, want none", p.Name, got)
		}
		if got := c.Resources.Limits["nvidia.com/gpu"]; got.String() != "2" {
			t.Errorf("pod %s trainer: GPU limit %s, want 2 (untouched)", p.Name, got.String())
		}
	}
}

// Beyond the nine: the README's other refusals of Indexed Job pods, as the job
// controller meets them: parallelism below completions, and no Service at all.
func TestIndexedJobRefusals(t *testing.T) {
	ns := newNamespace(t, "jobdeny")
	ctx := ctxT(t)
	bg := metav1.DeletePropagationBackground

	tmpl := podTemplate(with(optIn), nil)
	tmpl.Spec.Subdomain = "workers"
	createJob(t, ns, indexedJob("partial", 4, 2, tmpl))
	ev := waitEvent(t, ns, "Job", "partial", "FailedCreate", "distenv:", podWait)
	t.Logf("parallelism < completions: %s", ev.Message)
	if !strings.Contains(ev.Message, "parallelism") {
		t.Errorf("refusal does not name parallelism: %q", ev.Message)
	}

	createJob(t, ns, indexedJob("nosvc", 2, 2, podTemplate(with(optIn), nil)))
	ev = waitEvent(t, ns, "Job", "nosvc", "FailedCreate", "distenv:", podWait)
	t.Logf("no subdomain, no distenv.dev/service: %s", ev.Message)
	if !strings.Contains(ev.Message, "spec.subdomain") || !strings.Contains(ev.Message, "headless Service") {
		t.Errorf("refusal does not say to point spec.subdomain at a headless Service: %q", ev.Message)
	}

	for _, name := range []string{"partial", "nosvc"} {
		l, err := env.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + name})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) != 0 {
			t.Errorf("Job %s has %d pods stored, want 0", name, len(l.Items))
		}
		_ = env.cs.BatchV1().Jobs(ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &bg})
	}
}

// Scenario 8: distenv stopped: labelled pods are refused (failurePolicy Fail),
// unlabelled pods are created as usual; after a restart labelled pods work again.
func TestWebhookDownBlastRadius(t *testing.T) {
	ns := newNamespace(t, "down")
	ctx := ctxT(t)
	headlessService(t, ns, "ddp", map[string]string{"app": "ddp"})
	sts := createSTS(t, ns, statefulSet("ddp", "ddp", 0, podTemplate(with(optIn), nil)))
	ctrl := true
	labelled := func(name string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name:        name,
				Labels:      with(optIn, "app", "ddp"),
				Annotations: map[string]string{"distenv.dev/world-size": "8"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "ddp",
					UID: sts.UID, Controller: &ctrl}},
			},
			Spec: corev1.PodSpec{Hostname: name, Subdomain: "ddp", Containers: []corev1.Container{container("trainer")}},
		}
	}

	if err := stopWebhook(); err != nil {
		t.Errorf("stopping distenv: %v", err)
	}
	t.Cleanup(func() {
		if env.whCmd == nil {
			if err := startWebhook(); err != nil {
				t.Errorf("restart distenv: %v", err)
			}
		}
	})

	_, err := env.cs.CoreV1().Pods(ns).Create(ctx, labelled("ddp-5"), metav1.CreateOptions{})
	if err == nil {
		t.Fatalf("a labelled pod was created while distenv was down; want a refusal (failurePolicy Fail)")
	}
	t.Logf("labelled pod while distenv is down: %v", err)
	if !strings.Contains(err.Error(), webhookName) {
		t.Errorf("refusal does not name the webhook %s: %v", webhookName, err)
	}
	if _, err := env.cs.CoreV1().Pods(ns).Get(ctx, "ddp-5", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("GET ddp-5 after the refusal = %v, want NotFound", err)
	}

	plain, err := env.cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "plain", Labels: map[string]string{"app": "other"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{container("c")}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("an unlabelled pod was refused while distenv was down: %v", err)
	}
	if _, ok := plain.Annotations[injectedAnn]; ok {
		t.Errorf("unlabelled pod has %s", injectedAnn)
	}

	// Back up: labelled pods are admitted and injected again.
	if err := startWebhook(); err != nil {
		t.Fatalf("restart distenv: %v", err)
	}
	var got *corev1.Pod
	for i := 0; i < 120; i++ {
		got, err = env.cs.CoreV1().Pods(ns).Create(ctx, labelled("ddp-5"), metav1.CreateOptions{})
		if err == nil {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("labelled pod after distenv restarted: %v", err)
	}
	checkInjected(t, got, expectation{ns: ns, svc: "ddp", hosts: hostnames("ddp", 0, 8), rank: 5, port: 29500})
}
