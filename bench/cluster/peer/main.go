// Command peer is the controller-runtime pod webhook that bench/cluster measures
// beside distenv: the same environment for the pods of an Indexed Job or a JobSet
// (distenv.dev/frameworks: pytorch), written the way a controller-runtime user
// writes a pod defaulter: a typed decode, the pod changed in Go, and
// admission.PatchResponseFromRaw (a JSON diff) for the answer. It reads Jobs and
// JobSets from the manager's informer cache (list + watch), with a GET through the
// API reader when the cache does not have the owner yet, or has an older object of
// the same name.
//
// It knows only what the benchmark creates and denies anything else with a
// message, as distenv would: pods of other owners, frameworks other than pytorch,
// a rank not below the world size, a pod whose hostname is not its rank's host.
//
//	peer --listen 127.0.0.1:PORT --cert-dir DIR [--cluster-domain cluster.local] [--http2] [--standalone]
//
// --standalone serves without an API server (make bench's new-connection rows):
// controller-runtime's webhook server alone, every owner read as not found, so
// each pod is decoded and then denied (a floor of what a patch would cost it).
//
// It speaks HTTP/1.1 only, as kubebuilder's scaffold sets it up (enableHTTP2
// false, since CVE-2023-44487) and as distenv does; --http2 keeps
// controller-runtime's own default, which offers h2, over which the API server
// sends every admission on one connection.
//
// KUBECONFIG names the API server and identity (get, list, watch on jobs and
// jobsets).
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

const (
	injectedAnn   = "distenv.dev/injected"
	frameworksAnn = "distenv.dev/frameworks"
	indexAnn      = "batch.kubernetes.io/job-completion-index"
	jsNameLabel   = "jobset.sigs.k8s.io/jobset-name"
	jsUIDLabel    = "jobset.sigs.k8s.io/jobset-uid"
	jsRJobLabel   = "jobset.sigs.k8s.io/replicatedjob-name"
	jsJobIndex    = "jobset.sigs.k8s.io/job-index"
	port          = 29500
)

var jobSetGVK = schema.GroupVersionKind{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "JobSet"}

type injector struct {
	cache   client.Reader // the manager's informers
	api     client.Reader // straight to the API server
	decoder admission.Decoder
	domain  string
}

// get reads an owner from the cache, and from the API server when the cache has
// no object of that name or one of another uid (created again).
func (h *injector) get(ctx context.Context, key types.NamespacedName, uid string, obj client.Object) error {
	err := h.cache.Get(ctx, key, obj)
	if err == nil && string(obj.GetUID()) == uid {
		return nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err := h.api.Get(ctx, key, obj); err != nil {
		return err
	}
	if string(obj.GetUID()) != uid {
		return fmt.Errorf("%s is uid %s, the pod's owner %s", key, obj.GetUID(), uid)
	}
	return nil
}

// world is what a pod's variables are made of.
type world struct {
	rank, size int
	master     string // rank 0's host
	own        string // the host of the pod's own rank
}

func (h *injector) indexedJob(ctx context.Context, pod *corev1.Pod, ns string, owner *ownerRef, index int) (world, error) {
	job := &batchv1.Job{}
	if err := h.get(ctx, types.NamespacedName{Namespace: ns, Name: owner.name}, owner.uid, job); err != nil {
		return world{}, fmt.Errorf("Job %s: %v", owner.name, err)
	}
	if job.Spec.Completions == nil {
		return world{}, fmt.Errorf("Job %s has no completions", owner.name)
	}
	w := int(*job.Spec.Completions)
	if job.Spec.Parallelism != nil && int(*job.Spec.Parallelism) < w {
		return world{}, fmt.Errorf("Job %s: parallelism %d below completions %d", owner.name, *job.Spec.Parallelism, w)
	}
	return world{rank: index, size: w, master: owner.name + "-0", own: fmt.Sprintf("%s-%d", owner.name, index)}, nil
}

func (h *injector) jobSet(ctx context.Context, pod *corev1.Pod, ns string, index int) (world, error) {
	name, rjob := pod.Labels[jsNameLabel], pod.Labels[jsRJobLabel]
	jobIdx, err := strconv.Atoi(pod.Labels[jsJobIndex])
	if err != nil {
		return world{}, fmt.Errorf("label %s=%q is not a number", jsJobIndex, pod.Labels[jsJobIndex])
	}
	js := &unstructured.Unstructured{}
	js.SetGroupVersionKind(jobSetGVK)
	if err := h.get(ctx, types.NamespacedName{Namespace: ns, Name: name}, pod.Labels[jsUIDLabel], js); err != nil {
		return world{}, fmt.Errorf("JobSet %s: %v", name, err)
	}
	if _, ok, _ := unstructured.NestedMap(js.Object, "spec", "coordinator"); ok {
		return world{}, fmt.Errorf("JobSet %s names a coordinator, which this webhook does not handle", name)
	}
	rjobs, _, _ := unstructured.NestedSlice(js.Object, "spec", "replicatedJobs")
	offset, size, rank, first := 0, 0, -1, ""
	for _, r := range rjobs {
		m, _ := r.(map[string]any)
		rname, _, _ := unstructured.NestedString(m, "name")
		replicas, ok, _ := unstructured.NestedInt64(m, "replicas")
		if !ok {
			replicas = 1
		}
		completions, ok, _ := unstructured.NestedInt64(m, "template", "spec", "completions")
		if !ok {
			completions = 1
		}
		parallelism, ok, _ := unstructured.NestedInt64(m, "template", "spec", "parallelism")
		if ok && parallelism < completions {
			return world{}, fmt.Errorf("JobSet %s: replicated Job %s: parallelism %d below completions %d", name, rname, parallelism, completions)
		}
		if first == "" {
			first = rname
		}
		if rname == rjob {
			if jobIdx >= int(replicas) || index >= int(completions) {
				return world{}, fmt.Errorf("JobSet %s: pod %d of Job %d is outside replicated Job %s", name, index, jobIdx, rname)
			}
			rank = offset + jobIdx*int(completions) + index
		}
		offset += int(replicas * completions)
		size = offset
	}
	if rank < 0 {
		return world{}, fmt.Errorf("JobSet %s has no replicated Job %q", name, rjob)
	}
	return world{rank: rank, size: size, master: fmt.Sprintf("%s-%s-0-0", name, first),
		own: fmt.Sprintf("%s-%s-%d-%d", name, rjob, jobIdx, index)}, nil
}

type ownerRef struct{ name, uid string }

func (h *injector) Handle(ctx context.Context, req admission.Request) admission.Response {
	pod := &corev1.Pod{}
	if err := h.decoder.Decode(req, pod); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if _, done := pod.Annotations[injectedAnn]; done {
		return admission.Allowed("already injected")
	}
	if fw, ok := pod.Annotations[frameworksAnn]; !ok || fw != "pytorch" {
		return admission.Denied("peer: only distenv.dev/frameworks: pytorch is handled")
	}
	var owner *ownerRef
	for _, o := range pod.OwnerReferences {
		if o.Controller != nil && *o.Controller && o.Kind == "Job" && o.APIVersion == "batch/v1" {
			owner = &ownerRef{o.Name, string(o.UID)}
		}
	}
	idx, hasIdx := pod.Annotations[indexAnn]
	if owner == nil || !hasIdx {
		return admission.Denied("peer: not a pod of an Indexed Job")
	}
	index, err := strconv.Atoi(idx)
	if err != nil || index < 0 {
		return admission.Denied(fmt.Sprintf("peer: %s=%q is not an index", indexAnn, idx))
	}
	ns := pod.Namespace
	if ns == "" {
		ns = req.Namespace
	}
	var w world
	if _, ok := pod.Labels[jsNameLabel]; ok {
		w, err = h.jobSet(ctx, pod, ns, index)
	} else {
		w, err = h.indexedJob(ctx, pod, ns, owner, index)
	}
	if err != nil {
		return admission.Denied("peer: " + err.Error())
	}
	if w.rank >= w.size {
		return admission.Denied(fmt.Sprintf("peer: rank %d is not below the world size %d", w.rank, w.size))
	}
	if pod.Spec.Subdomain == "" {
		return admission.Denied("peer: the pod has no spec.subdomain")
	}
	if pod.Spec.Hostname != w.own {
		return admission.Denied(fmt.Sprintf("peer: the pod's hostname %q is not %q, the host of rank %d", pod.Spec.Hostname, w.own, w.rank))
	}
	addr := fmt.Sprintf("%s.%s.%s.svc.%s", w.master, pod.Spec.Subdomain, ns, h.domain)
	inject(pod, w, addr)
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[injectedAnn] = fmt.Sprintf("rank=%d,world-size=%d,master=%s:%d", w.rank, w.size, addr, port)
	raw, err := json.Marshal(pod)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}

// inject puts the pytorch variables before each container's own entries,
// leaving out those the container defines itself.
func inject(pod *corev1.Pod, w world, addr string) {
	p, r, s := strconv.Itoa(port), strconv.Itoa(w.rank), strconv.Itoa(w.size)
	nproc := 1
	for _, c := range pod.Spec.Containers {
		for _, res := range []corev1.ResourceName{"nvidia.com/gpu", "amd.com/gpu"} {
			if q, ok := c.Resources.Limits[res]; ok && int(q.Value()) > nproc {
				nproc = int(q.Value())
			}
		}
	}
	vars := []corev1.EnvVar{
		{Name: "MASTER_ADDR", Value: addr}, {Name: "MASTER_PORT", Value: p},
		{Name: "RANK", Value: r}, {Name: "WORLD_SIZE", Value: s},
		{Name: "NODE_RANK", Value: r}, {Name: "NNODES", Value: s},
		{Name: "PET_MASTER_ADDR", Value: addr}, {Name: "PET_MASTER_PORT", Value: p},
		{Name: "PET_NNODES", Value: s}, {Name: "PET_NODE_RANK", Value: r},
		{Name: "PET_NPROC_PER_NODE", Value: strconv.Itoa(nproc)},
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		own := map[string]string{}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				own[e.Name] = e.Value
			} else {
				own[e.Name] = ""
			}
		}
		var add []corev1.EnvVar
		for _, v := range vars {
			if _, mine := own[v.Name]; mine {
				continue
			}
			// A container's own literal MASTER_ADDR/MASTER_PORT carries to torchrun's.
			if v.Name == "PET_MASTER_ADDR" && own["MASTER_ADDR"] != "" {
				v.Value = own["MASTER_ADDR"]
			}
			if v.Name == "PET_MASTER_PORT" && own["MASTER_PORT"] != "" {
				v.Value = own["MASTER_PORT"]
			}
			add = append(add, v)
		}
		c.Env = append(add, c.Env...)
	}
}

// absent is the reader of --standalone: no object exists.
type absent struct{}

func (absent) Get(_ context.Context, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
	return apierrors.NewNotFound(schema.GroupResource{}, key.Name)
}

func (absent) List(_ context.Context, _ client.ObjectList, _ ...client.ListOption) error {
	return nil
}

func main() {
	listen := flag.String("listen", "127.0.0.1:9443", "HOST:PORT to serve HTTPS on")
	certDir := flag.String("cert-dir", "", "directory holding tls.crt and tls.key")
	domain := flag.String("cluster-domain", "cluster.local", "DNS suffix of the cluster")
	http2 := flag.Bool("http2", false, "offer HTTP/2 (controller-runtime's default; kubebuilder's scaffold turns it off)")
	standalone := flag.Bool("standalone", false, "no API server: every owner is not found, each pod denied")
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseDevMode(false)))
	host, portStr, err := net.SplitHostPort(*listen)
	if err != nil {
		fmt.Fprintf(os.Stderr, "peer: --listen: %v\n", err)
		os.Exit(2)
	}
	lport, err := strconv.Atoi(portStr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "peer: --listen: %v\n", err)
		os.Exit(2)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fmt.Fprintf(os.Stderr, "peer: scheme: %v\n", err)
		os.Exit(1)
	}
	tlsOpts := []func(*tls.Config){func(c *tls.Config) {
		if !*http2 {
			c.NextProtos = []string{"http/1.1"}
		}
	}}
	if *standalone {
		srv := webhook.NewServer(webhook.Options{Host: host, Port: lport, CertDir: *certDir, TLSOpts: tlsOpts})
		h := &injector{cache: absent{}, api: absent{}, decoder: admission.NewDecoder(scheme), domain: *domain}
		srv.Register("/mutate", &webhook.Admission{Handler: h})
		if err := srv.Start(ctrl.SetupSignalHandler()); err != nil {
			fmt.Fprintf(os.Stderr, "peer: %v\n", err)
			os.Exit(1)
		}
		return
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          webhook.NewServer(webhook.Options{Host: host, Port: lport, CertDir: *certDir, TLSOpts: tlsOpts}),
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "peer: manager: %v\n", err)
		os.Exit(1)
	}
	h := &injector{cache: mgr.GetCache(), api: mgr.GetAPIReader(), decoder: admission.NewDecoder(scheme), domain: *domain}
	mgr.GetWebhookServer().Register("/mutate", &webhook.Admission{Handler: h})
	ctx := ctrl.SetupSignalHandler()
	// The informers start with the manager; asking for them here lists and watches
	// Jobs and JobSets before the first admission.
	js := &unstructured.Unstructured{}
	js.SetGroupVersionKind(jobSetGVK)
	for _, obj := range []client.Object{&batchv1.Job{}, js} {
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			fmt.Fprintf(os.Stderr, "peer: informer: %v\n", err)
			os.Exit(1)
		}
	}
	if err := mgr.Start(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "peer: %v\n", err)
		os.Exit(1)
	}
}
