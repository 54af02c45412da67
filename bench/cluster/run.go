package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

var jobSetGVR = schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}

const (
	admissionMetric = "apiserver_admission_webhook_admission_duration_seconds"
	clusterDomain   = "cluster.local"
	port            = 29500
)

// result is one run: one workload under one variant.
type result struct {
	Round             int
	Workload, Variant string
	Pods              int
	LoadAvg           string  // /proc/loadavg (1, 5, 15 min) when the run started
	CreateSeconds     float64 // workload create -> last pod seen (watch)
	FirstPodSeconds   float64
	WebhookCount      float64 // the API server's admissions of the webhook
	WebhookP50ms      float64
	WebhookP99ms      float64
	WebhookMeanms     float64
	WebhookBuckets    string
	DistenvCount      float64
	DistenvP50ms      float64
	DistenvP99ms      float64
	DistenvMeanms     float64
	DistenvBuckets    string
	Lookups           map[string]float64
	LookupMeanms      float64 // distenv_lookup_duration_seconds: the GETs' mean and largest bucket
	LookupMaxBucket   string
	DistenvConns      float64 // distenv_connections_total over the run: every connection, each a handshake
	GetsJobs          float64
	GetsJobSets       float64
	ListWatchJobs     float64 // LIST + WATCH on jobs and jobsets in the window
	WebhookCPUSeconds float64
	WebhookPeakRSSMiB float64
	APIServerCPU      float64
	KCMCPU            float64
	PodPOSTs          float64
	PodPOSTErrors     float64 // pod creates answered other than 201
	Errors            float64 // webhook calls the API server counted with a code other than 200
	Denials           float64 // webhook answers allowed=false
	FailedCreate      int     // FailedCreate events in the namespace
	Connections       int     // connections to the webhook seen open during the run
	Checked           int     // pods read back and checked
	CheckOK           bool    // every pod as it should be
	problems          []string
	Problems          []string // wrong pods, denials: the run failed
	warnings          []string
	Warnings          []string // failed webhook calls
}

func (b *bench) run(ctx context.Context, round int, workload, variant string) (*result, error) {
	r := &result{Round: round, Workload: workload, Variant: variant, Lookups: map[string]float64{}}
	r.Pods = b.o.pods
	if workload == "jobset" {
		r.Pods = b.o.jsJobs * b.o.jsPods
	}
	if variant != "none" {
		if err := b.start(variant, fmt.Sprintf("%s-%s-r%d.log", variant, workload, round)); err != nil {
			return nil, err
		}
		if err := b.register(ctx, variant); err != nil {
			return nil, err
		}
	} else if err := b.unregister(ctx); err != nil {
		return nil, err
	}
	if err := b.waitActive(ctx, variant); err != nil {
		return nil, err
	}
	ns := fmt.Sprintf("bench-%s-%s-r%d", workload, variant, round)
	if _, err := b.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	if err := waitDefaultSA(ctx, b.cs, ns); err != nil {
		return nil, err
	}
	list, err := b.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	w, err := b.cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		return nil, err
	}

	r.LoadAvg = loadavg()
	apiBefore, err := b.apiMetrics(ctx)
	if err != nil {
		return nil, err
	}
	var whBefore []sample
	if variant == "distenv" {
		if whBefore, err = b.distenvMetrics(); err != nil {
			return nil, fmt.Errorf("distenv /metrics: %w", err)
		}
	}
	pid := 0
	if b.cmd != nil {
		pid = b.cmd.Process.Pid
	}
	procBefore, apiCPU, kcmCPU := readProc(pid), readProc(b.apiPID).cpu, readProc(b.kcmPID).cpu

	var conns *connWatch
	if variant != "none" {
		conns = watchConns(b.port)
	}
	start := time.Now()
	if err := b.create(ctx, ns, workload); err != nil {
		w.Stop()
		return nil, err
	}
	first, last, err := b.waitPods(ctx, ns, w, list.ResourceVersion, r.Pods)
	if err != nil {
		return nil, err
	}
	r.CreateSeconds, r.FirstPodSeconds = last.Sub(start).Seconds(), first.Sub(start).Seconds()

	// The last pods' request counters are written after their watch events: let them land.
	time.Sleep(time.Second)
	procAfter := readProc(pid)
	if conns != nil {
		r.Connections = conns.count()
	}
	r.APIServerCPU, r.KCMCPU = readProc(b.apiPID).cpu-apiCPU, readProc(b.kcmPID).cpu-kcmCPU
	r.WebhookCPUSeconds, r.WebhookPeakRSSMiB = procAfter.cpu-procBefore.cpu, procAfter.hwmKB/1024
	apiAfter, err := b.apiMetrics(ctx)
	if err != nil {
		return nil, err
	}
	b.apiFigures(r, apiBefore, apiAfter)
	if variant == "distenv" {
		whAfter, err := b.distenvMetrics()
		if err != nil {
			return nil, fmt.Errorf("distenv /metrics: %w", err)
		}
		all := func(map[string]string) bool { return true }
		h := histogramOf(whAfter, "distenv_admission_duration_seconds", all).minus(histogramOf(whBefore, "distenv_admission_duration_seconds", all))
		r.DistenvCount, r.DistenvBuckets = h.count, h.buckets()
		r.DistenvP50ms, r.DistenvP99ms, r.DistenvMeanms = nan0(1000*h.quantile(0.5)), nan0(1000*h.quantile(0.99)), nan0(1000*h.mean())
		lh := histogramOf(whAfter, "distenv_lookup_duration_seconds", all).minus(histogramOf(whBefore, "distenv_lookup_duration_seconds", all))
		r.LookupMeanms = nan0(1000 * lh.mean())
		if b := strings.Fields(lh.buckets()); len(b) > 0 {
			r.LookupMaxBucket = b[len(b)-1]
		}
		for _, o := range []string{"ok", "cached", "error"} {
			is := func(l map[string]string) bool { return l["outcome"] == o }
			r.Lookups[o] = sum(whAfter, "distenv_lookups_total", is) - sum(whBefore, "distenv_lookups_total", is)
		}
		r.DistenvConns = sum(whAfter, "distenv_connections_total", all) - sum(whBefore, "distenv_connections_total", all)
	}
	b.check(ctx, r, ns, workload, variant)
	r.CheckOK = len(r.problems) == 0
	if ev, err := b.cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=FailedCreate"}); err == nil {
		r.FailedCreate = len(ev.Items)
	}
	if r.Denials > 0 {
		r.problems = append(r.problems, fmt.Sprintf("%.0f pods of the workload denied", r.Denials))
	}
	// Failed calls (a refused connection, a 503) fail a create, which the controller
	// makes again: a cost shown, not a wrong pod (every pod is checked above).
	if r.Errors > 0 || r.PodPOSTErrors > 0 || r.FailedCreate > 0 {
		r.warnings = append(r.warnings, fmt.Sprintf("webhook errors %.0f, pod creates not 201: %.0f, FailedCreate events %d (the controller made those pods again)",
			r.Errors, r.PodPOSTErrors, r.FailedCreate))
	}
	r.Problems, r.Warnings = r.problems, r.warnings

	// Leave the next run an idle control plane: the namespace gone, the webhook stopped.
	if err := b.cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		return nil, err
	}
	if variant != "none" {
		if err := b.unregister(ctx); err != nil {
			return nil, err
		}
		if err := b.stop(variant); err != nil {
			return nil, err
		}
	}
	for i := 0; ; i++ {
		if _, err := b.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			break
		}
		if i >= 2400 {
			return nil, fmt.Errorf("namespace %s not gone 10 min after its delete", ns)
		}
		time.Sleep(250 * time.Millisecond)
	}
	return r, nil
}

// apiFigures fills in what the API server's metrics say of the run's window.
func (b *bench) apiFigures(r *result, before, after []sample) {
	name := webhookName[r.Variant]
	if name != "" {
		keep := func(l map[string]string) bool {
			return l["name"] == name && l["operation"] == "CREATE" && l["type"] == "admit"
		}
		h := histogramOf(after, admissionMetric, keep).minus(histogramOf(before, admissionMetric, keep))
		r.WebhookCount, r.WebhookBuckets = h.count, h.buckets()
		r.WebhookP50ms, r.WebhookP99ms, r.WebhookMeanms = nan0(1000*h.quantile(0.5)), nan0(1000*h.quantile(0.99)), nan0(1000*h.mean())
		diff := func(metric string, keep func(map[string]string) bool) float64 {
			return sum(after, metric, keep) - sum(before, metric, keep)
		}
		r.Errors = diff("apiserver_admission_webhook_request_total", func(l map[string]string) bool {
			return l["name"] == name && l["code"] != "200"
		})
		r.Denials = diff("apiserver_admission_webhook_request_total", func(l map[string]string) bool {
			return l["name"] == name && l["code"] == "200" && l["rejected"] == "true"
		})
	}
	req := func(keep func(map[string]string) bool) float64 {
		return sum(after, "apiserver_request_total", keep) - sum(before, "apiserver_request_total", keep)
	}
	r.GetsJobs = req(func(l map[string]string) bool {
		return l["verb"] == "GET" && l["resource"] == "jobs" && l["subresource"] == ""
	})
	r.GetsJobSets = req(func(l map[string]string) bool {
		return l["verb"] == "GET" && l["resource"] == "jobsets" && l["subresource"] == ""
	})
	r.ListWatchJobs = req(func(l map[string]string) bool {
		return (l["verb"] == "LIST" || l["verb"] == "WATCH") && (l["resource"] == "jobs" || l["resource"] == "jobsets")
	})
	r.PodPOSTs = req(func(l map[string]string) bool {
		return l["verb"] == "POST" && l["resource"] == "pods" && l["subresource"] == "" && l["dry_run"] == ""
	})
	r.PodPOSTErrors = req(func(l map[string]string) bool {
		return l["verb"] == "POST" && l["resource"] == "pods" && l["subresource"] == "" && l["dry_run"] == "" && l["code"] != "201"
	})
}

// podTemplate is a training pod as users write it: opted in, pytorch only (with
// the default frameworks TF_CONFIG would list every host: about 120 KB a pod at
// 2,000 ranks, a cost of etcd rather than of the webhook).
func podTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{injectLabel: "true", "app": "trainer"},
			Annotations: map[string]string{"distenv.dev/frameworks": "pytorch"},
		},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "trainer", Image: "registry.invalid/trainer:1", Command: []string{"torchrun", "train.py"},
				Env: []corev1.EnvVar{{Name: "NCCL_DEBUG", Value: "WARN"}, {Name: "OMP_NUM_THREADS", Value: "4"}},
			}},
		},
	}
}

func (b *bench) create(ctx context.Context, ns, workload string) error {
	tmpl := podTemplate()
	switch workload {
	case "job":
		n := int32(b.o.pods)
		mode := batchv1.IndexedCompletion
		tmpl.Spec.Subdomain = "workers"
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "big"},
			Spec:       batchv1.JobSpec{CompletionMode: &mode, Completions: &n, Parallelism: &n, Template: tmpl},
		}
		_, err := b.cs.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{})
		return err
	default:
		tmplMap, err := toMap(tmpl)
		if err != nil {
			return err
		}
		js := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
			"metadata": map[string]any{"name": "js"},
			"spec": map[string]any{"replicatedJobs": []any{map[string]any{
				"name": "workers", "replicas": int64(b.o.jsJobs),
				"template": map[string]any{"spec": map[string]any{
					"completionMode": "Indexed", "completions": int64(b.o.jsPods), "parallelism": int64(b.o.jsPods),
					"backoffLimit": int64(0), "template": tmplMap,
				}},
			}}},
		}}
		_, err = b.dyn.Resource(jobSetGVR).Namespace(ns).Create(ctx, js, metav1.CreateOptions{})
		return err
	}
}

func toMap(t corev1.PodTemplateSpec) (map[string]any, error) {
	return runtime.DefaultUnstructuredConverter.ToUnstructured(&t)
}

// waitPods counts the pods the watch sees added until there are n, and returns
// when the first and the last arrived.
func (b *bench) waitPods(ctx context.Context, ns string, w watch.Interface, rv string, n int) (first, last time.Time, err error) {
	uids := map[string]bool{}
	deadline := time.After(b.o.timeout)
	defer func() { w.Stop() }()
	for len(uids) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				// The watch ended (a timeout of the API server): go on from the last version seen.
				if w, err = b.cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv}); err != nil {
					return first, last, err
				}
				continue
			}
			pod, isPod := ev.Object.(*corev1.Pod)
			if !isPod {
				continue
			}
			rv = pod.ResourceVersion
			if ev.Type == watch.Added && !uids[string(pod.UID)] {
				uids[string(pod.UID)] = true
				last = time.Now()
				if first.IsZero() {
					first = last
				}
			}
		case <-deadline:
			return first, last, fmt.Errorf("namespace %s: %d pods after %v, want %d", ns, len(uids), b.o.timeout, n)
		}
	}
	return first, last, nil
}

// check reads every pod back from the API server: ranks distinct, the hostname
// the controller gave, and for the webhooks the whole injected environment of
// README (pytorch) and the distenv.dev/injected annotation.
func (b *bench) check(ctx context.Context, r *result, ns, workload, variant string) {
	bad := func(format string, a ...any) {
		if len(r.problems) < 10 {
			r.problems = append(r.problems, fmt.Sprintf(format, a...))
		}
	}
	var pods []corev1.Pod
	opts := metav1.ListOptions{Limit: 500}
	for {
		l, err := b.cs.CoreV1().Pods(ns).List(ctx, opts)
		if err != nil {
			bad("list pods: %v", err)
			return
		}
		pods = append(pods, l.Items...)
		if l.Continue == "" {
			break
		}
		opts.Continue = l.Continue
	}
	if len(pods) != r.Pods {
		bad("%d pods stored, want %d", len(pods), r.Pods)
	}
	var master, sub string
	if workload == "job" {
		master, sub = "big-0", "workers"
	} else {
		master, sub = "js-workers-0-0", "js"
	}
	addr := fmt.Sprintf("%s.%s.%s.svc.%s", master, sub, ns, clusterDomain)
	ws := strconv.Itoa(r.Pods)
	ranks := map[int]bool{}
	envRanks := map[string]bool{}
	for i := range pods {
		p := &pods[i]
		idx, err := strconv.Atoi(p.Annotations["batch.kubernetes.io/job-completion-index"])
		if err != nil {
			bad("pod %s: completion index %q", p.Name, p.Annotations["batch.kubernetes.io/job-completion-index"])
			continue
		}
		rank, host := idx, fmt.Sprintf("big-%d", idx)
		if workload == "jobset" {
			j, err := strconv.Atoi(p.Labels["jobset.sigs.k8s.io/job-index"])
			if err != nil {
				bad("pod %s: job index %q", p.Name, p.Labels["jobset.sigs.k8s.io/job-index"])
				continue
			}
			rank, host = j*b.o.jsPods+idx, fmt.Sprintf("js-workers-%d-%d", j, idx)
		}
		if p.Spec.Hostname != host {
			bad("pod %s: hostname %q, want %q", p.Name, p.Spec.Hostname, host)
		}
		if ranks[rank] {
			bad("pod %s: rank %d twice", p.Name, rank)
		}
		ranks[rank] = true
		c := p.Spec.Containers[0]
		ann, injected := p.Annotations["distenv.dev/injected"]
		if variant == "none" {
			if injected || len(c.Env) != 3 {
				bad("pod %s: changed without a webhook (%d env entries)", p.Name, len(c.Env))
			}
			continue
		}
		rs := strconv.Itoa(rank)
		want := [][2]string{{"MASTER_ADDR", addr}, {"MASTER_PORT", "29500"}, {"RANK", rs}, {"WORLD_SIZE", ws},
			{"NODE_RANK", rs}, {"NNODES", ws}, {"PET_MASTER_ADDR", addr}, {"PET_MASTER_PORT", "29500"},
			{"PET_NNODES", ws}, {"PET_NODE_RANK", rs}, {"PET_NPROC_PER_NODE", "1"},
			{"NCCL_DEBUG", "WARN"}, {"OMP_NUM_THREADS", "4"}, {"JOB_COMPLETION_INDEX", ""}}
		var got []string
		for _, e := range c.Env {
			got = append(got, e.Name+"="+e.Value)
		}
		var exp []string
		for _, kv := range want {
			exp = append(exp, kv[0]+"="+kv[1])
		}
		if strings.Join(got, " ") != strings.Join(exp, " ") {
			bad("pod %s: env %.300s, want %.300s", p.Name, strings.Join(got, " "), strings.Join(exp, " "))
		}
		for _, e := range c.Env {
			if e.Name == "RANK" {
				envRanks[e.Value] = true
			}
		}
		if wantAnn := fmt.Sprintf("rank=%d,world-size=%s,master=%s:%d", rank, ws, addr, port); ann != wantAnn {
			bad("pod %s: distenv.dev/injected %q, want %q", p.Name, ann, wantAnn)
		}
	}
	if len(ranks) != r.Pods {
		bad("%d distinct ranks, want %d", len(ranks), r.Pods)
	}
	if variant != "none" && len(envRanks) != r.Pods {
		bad("%d distinct RANK values, want %d", len(envRanks), r.Pods)
	}
	r.Checked = len(pods)
}

// text prints a run for people.
func (r *result) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n--- round %d: %s (%d pods), %s --- load average at start %s\n", r.Round, r.Workload, r.Pods, r.Variant, r.LoadAvg)
	fmt.Fprintf(&b, "create -> last pod stored: %.2f s (first pod %.2f s)\n", r.CreateSeconds, r.FirstPodSeconds)
	if r.Variant != "none" {
		fmt.Fprintf(&b, "API server %s{name=%s,CREATE,admit}: count %.0f, p50 %.2f ms, p99 %.2f ms (bucket estimates), mean %.3f ms\n",
			admissionMetric, webhookName[r.Variant], r.WebhookCount, r.WebhookP50ms, r.WebhookP99ms, r.WebhookMeanms)
		fmt.Fprintf(&b, "  buckets (le s:count) %s\n", r.WebhookBuckets)
	}
	if r.Variant == "distenv" {
		fmt.Fprintf(&b, "distenv_admission_duration_seconds (its /metrics): count %.0f, p50 %.3f ms, p99 %.3f ms, mean %.3f ms\n",
			r.DistenvCount, r.DistenvP50ms, r.DistenvP99ms, r.DistenvMeanms)
		fmt.Fprintf(&b, "  buckets (le s:count) %s\n", r.DistenvBuckets)
		fmt.Fprintf(&b, "  look-ups: ok %.0f, cached %.0f, error %.0f; GETs: mean %.1f ms, slowest bucket (le s:count) %s\n",
			r.Lookups["ok"], r.Lookups["cached"], r.Lookups["error"], r.LookupMeanms, r.LookupMaxBucket)
		if r.DistenvConns > 0 {
			fmt.Fprintf(&b, "  connections distenv accepted (distenv_connections_total, its own /metrics read included): %.0f; CPU per connection %.2f ms\n",
				r.DistenvConns, 1000*r.WebhookCPUSeconds/r.DistenvConns)
		}
	}
	fmt.Fprintf(&b, "GETs the API server served: jobs %.0f, jobsets %.0f (LIST+WATCH on them %.0f)\n", r.GetsJobs, r.GetsJobSets, r.ListWatchJobs)
	if r.Variant != "none" {
		fmt.Fprintf(&b, "webhook process: CPU %.2f s, peak RSS %.1f MiB; connections from the API server seen: %d\n",
			r.WebhookCPUSeconds, r.WebhookPeakRSSMiB, r.Connections)
	}
	fmt.Fprintf(&b, "kube-apiserver CPU %.2f s, kube-controller-manager CPU %.2f s\n", r.APIServerCPU, r.KCMCPU)
	fmt.Fprintf(&b, "pod creates %.0f (not 201: %.0f); webhook errors %.0f, denials %.0f; FailedCreate events %d\n",
		r.PodPOSTs, r.PodPOSTErrors, r.Errors, r.Denials, r.FailedCreate)
	if r.CheckOK {
		fmt.Fprintf(&b, "pods read back: %d, ranks distinct, hostnames right", r.Checked)
		if r.Variant != "none" {
			fmt.Fprintf(&b, ", env (WORLD_SIZE %d) and distenv.dev/injected right", r.Pods)
		}
		fmt.Fprintf(&b, "\n")
	}
	for _, p := range r.problems {
		fmt.Fprintf(&b, "PROBLEM: %s\n", p)
	}
	for _, w := range r.warnings {
		fmt.Fprintf(&b, "ERRORS: %s\n", w)
	}
	return b.String()
}
