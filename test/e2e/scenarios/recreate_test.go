package scenarios

import (
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Re-running a Job the usual way — delete it and create it again under the same
// name with more completions — within the webhook's look-up cache TTL: every
// pod of the new Job gets the new world size, and no pod creation is refused.
func TestRecreatedJobGetsTheNewWorld(t *testing.T) {
	ns := newNamespace(t, "rerun")
	headlessService(t, ns, "rerun", map[string]string{"job-name": "rerun"})
	tmpl := podTemplate(with(optIn), map[string]string{"distenv.dev/frameworks": "pytorch"})
	tmpl.Spec.Subdomain = "rerun"
	old := createJob(t, ns, indexedJob("rerun", 2, 2, tmpl))
	oldPods := waitPods(t, ns, map[string]string{"job-name": "rerun"}, 2, podWait)
	for i := range oldPods {
		if v, _ := envValue(oldPods[i].Spec.Containers[0], "WORLD_SIZE"); v != "2" {
			t.Fatalf("old Job pod %s: WORLD_SIZE=%q, want 2", oldPods[i].Name, v)
		}
	}
	fg := metav1.DeletePropagationForeground
	if err := env.cs.BatchV1().Jobs(ns).Delete(ctxT(t), "rerun",
		metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
		t.Fatalf("delete Job: %v", err)
	}
	// Bounded wait until the old Job is gone (its pods with it).
	for i := 0; ; i++ {
		if _, err := env.cs.BatchV1().Jobs(ns).Get(ctxT(t), "rerun", metav1.GetOptions{}); err != nil {
			break
		}
		if i > 200 {
			t.Fatalf("the old Job was not deleted within 60 s")
		}
		time.Sleep(300 * time.Millisecond)
	}
	created := createJob(t, ns, indexedJob("rerun", 4, 4, tmpl))
	if created.UID == old.UID {
		t.Fatalf("the new Job has the old uid")
	}
	var pods []corev1.Pod
	for i := 0; ; i++ {
		all, err := env.cs.CoreV1().Pods(ns).List(ctxT(t), metav1.ListOptions{LabelSelector: "job-name=rerun"})
		if err != nil {
			t.Fatalf("list pods: %v", err)
		}
		pods = pods[:0]
		for _, p := range all.Items {
			if len(p.OwnerReferences) == 1 && p.OwnerReferences[0].UID == created.UID {
				pods = append(pods, p)
			}
		}
		if len(pods) == 4 || i > 200 {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	if len(pods) != 4 {
		t.Fatalf("%d pods of the new Job, want 4; events: %s", len(pods), eventSummary(t, ns))
	}
	seen := map[int]bool{}
	for i := range pods {
		c := pods[i].Spec.Containers[0]
		ws, _ := envValue(c, "WORLD_SIZE")
		rank, _ := envValue(c, "RANK")
		r, err := strconv.Atoi(rank)
		if ws != "4" || err != nil || r != jobIndex(t, &pods[i]) {
			t.Errorf("new Job pod %s: WORLD_SIZE=%q RANK=%q, want 4 and its index", pods[i].Name, ws, rank)
		}
		seen[r] = true
	}
	if len(seen) != 4 {
		t.Errorf("ranks %v, want 0..3 once each", seen)
	}
	if ev := eventSummary(t, ns); strings.Contains(ev, "FailedCreate") {
		t.Errorf("a pod creation was refused: %s", ev)
	}

	// Within the TTL: the old Job's answer is still cached after the new Job's pods
	// were admitted, so they were admitted beside it (not after it expired) and the
	// uid in the key kept them apart. Checked by the cache itself: a pod of the old
	// Job, sent again (dry run), is answered from the cache with the old world.
	_, before, ok := scrapeWebhook(t)
	if !ok {
		t.Fatalf("the webhook's /metrics could not be read")
	}
	probe := oldPods[0].DeepCopy()
	probe.ObjectMeta = metav1.ObjectMeta{
		GenerateName:    "rerun-",
		Namespace:       ns,
		Labels:          probe.Labels,
		Annotations:     map[string]string{},
		OwnerReferences: probe.OwnerReferences,
	}
	for k, v := range oldPods[0].Annotations {
		if k != "distenv.dev/injected" {
			probe.Annotations[k] = v
		}
	}
	probe.Spec.Containers = tmpl.Spec.DeepCopy().Containers
	probe.Spec.InitContainers = tmpl.Spec.DeepCopy().InitContainers
	probe.Status = corev1.PodStatus{}
	if len(probe.OwnerReferences) != 1 || probe.OwnerReferences[0].UID != old.UID {
		t.Fatalf("old Job pod %s: owner %v, want the old Job's uid", oldPods[0].Name, probe.OwnerReferences)
	}
	out, err := env.cs.CoreV1().Pods(ns).Create(ctxT(t), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("a pod of the old Job sent again (dry run): %v; its cached answer had expired, so "+
			"the new Job's pods were not admitted within the cache TTL", err)
	}
	if ws, _ := envValue(out.Spec.Containers[0], "WORLD_SIZE"); ws != "2" {
		t.Errorf("a pod of the old Job sent again: WORLD_SIZE=%q, want 2 (the old Job's cached answer)", ws)
	}
	_, after, ok := scrapeWebhook(t)
	if !ok {
		t.Fatalf("the webhook's /metrics could not be read")
	}
	// (At least: other namespaces' controllers may still create pods meanwhile.)
	if after["cached"] < before["cached"]+1 {
		t.Errorf("a pod of the old Job sent again: look-ups answered from the cache %v -> %v, want one more",
			before["cached"], after["cached"])
	}
}
