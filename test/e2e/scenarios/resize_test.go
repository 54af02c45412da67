package scenarios

// Worlds that change size, through the real API server and kubectl: a
// re-applied StatefulSet with more replicas, `kubectl scale` (the chart's
// scale.distenv.dev webhook on statefulsets/scale, failurePolicy Ignore), and
// an Indexed Job resized with completions and parallelism together (elastic
// Indexed Jobs, GA in 1.31). Each is allowed, with distenv's warning as kubectl
// prints it; a scale to 0 and back is not warned.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// registerScale registers distenv's scale webhook for namespace ns alone, as
// the chart makes it (statefulsets/scale, UPDATE, no matchConditions, Ignore),
// and removes it when the test ends.
func registerScale(t *testing.T, ns string) {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(env.whDir, "certs", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("https://127.0.0.1:%d/validate", env.whPort)
	sideEffects := admissionregistrationv1.SideEffectClassNone
	ignore := admissionregistrationv1.Ignore
	equivalent := admissionregistrationv1.Equivalent
	timeout := int32(10)
	scope := admissionregistrationv1.NamespacedScope
	name := "distenv-scale-" + ns
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         "scale.distenv.dev",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"},
					Resources: []string{"statefulsets/scale"}, Scope: &scope},
			}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			SideEffects:             &sideEffects,
			FailurePolicy:           &ignore,
			MatchPolicy:             &equivalent,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          &timeout,
		}},
	}
	if _, err := env.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctxT(t), cfg, metav1.CreateOptions{}); err != nil {
		t.Fatalf("ValidatingWebhookConfiguration (scale): %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = env.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{})
	})
}

// warnings keeps kubectl's "Warning: distenv: ..." lines about the world
// (others, such as this harness's Service without publishNotReadyAddresses,
// are not these tests').
func warnings(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "Warning: distenv: ") &&
			(strings.Contains(l, " world ") || strings.Contains(l, "restart every pod")) {
			out = append(out, strings.TrimPrefix(l, "Warning: "))
		}
	}
	return out
}

func wantWarnings(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s: distenv's warnings\n  %s\nwant\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	} else if len(want) > 0 {
		t.Logf("%s: %s", what, strings.Join(got, " / "))
	}
}

func stsWorldWarnings(name string, from, to int) []string {
	return []string{
		fmt.Sprintf("distenv: StatefulSet %s: world %d -> %d ranks, but the running pods keep WORLD_SIZE=%d", name, from, to, from),
		fmt.Sprintf("distenv: to form one world of %d, restart every pod (kubectl rollout restart statefulset/%s) or use distenv.dev/elastic", to, name),
	}
}

// A StatefulSet of 2 re-applied with 4 replicas, then `kubectl scale` to 3, to 0
// and back to 2: the API server calls distenv for each; the world changes are
// warned, to and from 0 are not.
func TestResizeStatefulSetWarned(t *testing.T) {
	ns := newNamespace(t, "resize")
	headlessService(t, ns, "ddp", map[string]string{injectLabel: "true"})
	registerValidating(t, ns)
	registerScale(t, ns)

	two := statefulSetYAML("ddp", false, "", nil)
	if _, stderr, err := kubectlIn(t, two, "-n", ns, "apply", "-f", "-"); err != nil {
		t.Fatalf("kubectl apply: %v: %s", err, stderr)
	}
	four := strings.Replace(two, "replicas: 2", "replicas: 4", 1)
	_, stderr, err := kubectlIn(t, four, "-n", ns, "apply", "-f", "-")
	if err != nil {
		t.Fatalf("kubectl apply (4 replicas): %v: %s", err, stderr)
	}
	wantWarnings(t, "re-applied with 4 replicas", warnings(stderr), stsWorldWarnings("ddp", 2, 4)...)

	// The scale webhook is Ignore: a call that never reached distenv would pass
	// unwarned, so the first scale is retried until the API server uses it.
	var got []string
	for i := 0; i < 60; i++ {
		_, stderr, err = kubectlIn(t, "", "-n", ns, "scale", "statefulset/ddp", "--replicas=3")
		if err != nil {
			t.Fatalf("kubectl scale --replicas=3: %v: %s", err, stderr)
		}
		if got = warnings(stderr); len(got) > 0 {
			break
		}
		// back to 4, so that the next try is a world change again
		if _, stderr, err = kubectlIn(t, "", "-n", ns, "scale", "statefulset/ddp", "--replicas=4"); err != nil {
			t.Fatalf("kubectl scale --replicas=4: %v: %s", err, stderr)
		}
		time.Sleep(250 * time.Millisecond)
	}
	wantWarnings(t, "kubectl scale 4 -> 3", got, stsWorldWarnings("ddp", 4, 3)...)

	for _, n := range []string{"0", "2"} {
		_, stderr, err = kubectlIn(t, "", "-n", ns, "scale", "statefulset/ddp", "--replicas="+n)
		if err != nil {
			t.Fatalf("kubectl scale --replicas=%s: %v: %s", n, err, stderr)
		}
		wantWarnings(t, "kubectl scale to "+n, warnings(stderr))
	}
}

// An Indexed Job of 2 resized to 3 (completions and parallelism together, as
// the Job API allows): the update is allowed and warned.
func TestResizeIndexedJobWarned(t *testing.T) {
	ns := newNamespace(t, "resizejob")
	headlessService(t, ns, "train", map[string]string{injectLabel: "true"})
	registerValidating(t, ns)

	job := func(n int) string {
		return fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  completions: %d
  parallelism: %d
  completionMode: Indexed
  template:
    metadata:
      labels: {app: train, distenv.dev/inject: "true"}
    spec:
      subdomain: train
      restartPolicy: Never
      containers:
      - name: trainer
        image: registry.invalid/trainer:1
`, n, n)
	}
	if _, stderr, err := kubectlIn(t, job(2), "-n", ns, "apply", "-f", "-"); err != nil {
		t.Fatalf("kubectl apply: %v: %s", err, stderr)
	}
	_, stderr, err := kubectlIn(t, job(3), "-n", ns, "apply", "-f", "-")
	if err != nil {
		t.Fatalf("kubectl apply (3 completions): %v: %s", err, stderr)
	}
	wantWarnings(t, "Job resized 2 -> 3", warnings(stderr),
		"distenv: Job train: world 2 -> 3 ranks, but the running pods keep WORLD_SIZE=2",
		"distenv: to form one world of 3, restart every pod (delete and re-create Job train) or use distenv.dev/elastic")
}

// A JobSet whose replicated Job goes from 2 to 3 pods (parallelism and
// completions together, which JobSet's ElasticJobSet gate allows; cluster.sh
// turns it on): allowed, and warned.
func TestResizeJobSetWarned(t *testing.T) {
	needManager(t, "jobset")
	ns := newNamespace(t, "resizejs")
	registerValidating(t, ns)

	js := func(n int) string {
		return fmt.Sprintf(`apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: js
spec:
  replicatedJobs:
  - name: w
    replicas: 1
    template:
      spec:
        completions: %d
        parallelism: %d
        completionMode: Indexed
        template:
          metadata:
            labels: {distenv.dev/inject: "true"}
          spec:
            restartPolicy: Never
            containers:
            - name: trainer
              image: registry.invalid/trainer:1
`, n, n)
	}
	if _, stderr, err := kubectlIn(t, js(2), "-n", ns, "apply", "-f", "-"); err != nil {
		t.Fatalf("kubectl apply: %v: %s", err, stderr)
	}
	_, stderr, err := kubectlIn(t, js(3), "-n", ns, "apply", "-f", "-")
	if err != nil {
		t.Fatalf("kubectl apply (3 pods; JobSet's ElasticJobSet gate): %v: %s", err, stderr)
	}
	wantWarnings(t, "JobSet resized 2 -> 3", warnings(stderr),
		"distenv: JobSet js: world 2 -> 3 ranks, but the running pods keep WORLD_SIZE=2",
		"distenv: to form one world of 3, restart every pod (delete and re-create JobSet js) or use distenv.dev/elastic")
}
