package scenarios

// TestNode8Doctor: `kubectl distenv doctor` (distenv-webhook run as the kubectl
// plugin kubectl-distenv, found on PATH) on live jobs of the real node, read
// from the real API server with the admin kubeconfig: one healthy job, and
// broken ones each diagnosed with its own first blocking cause. Run alone:
// test/e2e-node/run.sh -run 'TestNode1Chart|TestNode8Doctor' (the chart is
// installed by TestMain either way; TestNode1Chart only checks it).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

type doctorCheck struct {
	Check, State, Title, Evidence, Fix string
}

type doctorReport struct {
	Blocked    bool
	FirstCause *string
	Checks     []doctorCheck
}

// doctorPath is a directory holding kubectl-distenv, a link to the distenv-webhook
// binary (DISTENV_DOCTOR_BIN, which run.sh builds), as `make install` makes it.
func doctorPath(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("DISTENV_DOCTOR_BIN")
	if bin == "" {
		t.Fatalf("DISTENV_DOCTOR_BIN is not set (test/e2e-node/run.sh sets it)")
	}
	dir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(dir, "kubectl-distenv")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// doctor runs `kubectl distenv doctor target -n ns [args]`; returns stdout, stderr and the exit code.
func doctor(t *testing.T, dir, ns, target string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node.kubectl, append([]string{"distenv", "doctor", target, "-n", ns}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+filepath.Dir(node.kubectl)+":"+os.Getenv("PATH"))
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("kubectl distenv doctor: %v", err)
	}
	return out.String(), errb.String(), code
}

// diagnose runs doctor as text (logged) and as JSON (returned), until want
// says the report is the settled one or within passes.
func diagnose(t *testing.T, dir, ns, target string, within time.Duration, want func(doctorReport, int) bool) (doctorReport, int, string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		js, stderr, code := doctor(t, dir, ns, target, "-o", "json")
		var r doctorReport
		if err := json.Unmarshal([]byte(js), &r); err != nil {
			t.Fatalf("doctor -o json: %v\n%s%s", err, js, stderr)
		}
		if want(r, code) || time.Now().After(deadline) {
			text, _, tcode := doctor(t, dir, ns, target)
			t.Logf("kubectl distenv doctor %s -n %s (exit %d):\n%s", target, ns, tcode, indent(text, "  "))
			return r, code, text
		}
		time.Sleep(2 * time.Second)
	}
}

func firstCause(r doctorReport) (doctorCheck, bool) {
	for _, c := range r.Checks {
		if c.State == "fail" {
			return c, true
		}
	}
	return doctorCheck{}, false
}

// expectCause asserts the first blocking cause: its check and words of its title or evidence.
func expectCause(t *testing.T, dir, ns, target, check, says string) {
	t.Helper()
	r, code, text := diagnose(t, dir, ns, target, 90*time.Second, func(r doctorReport, _ int) bool {
		c, ok := firstCause(r)
		return ok && c.Check == check && strings.Contains(c.Title+" "+c.Evidence, says)
	})
	c, ok := firstCause(r)
	if !ok {
		t.Fatalf("%s: doctor found nothing blocking, want %s (%q)", ns, check, says)
	}
	if c.Check != check || !strings.Contains(c.Title+" "+c.Evidence, says) {
		t.Errorf("%s: first cause %s: %q / %q; want %s with %q", ns, c.Check, c.Title, c.Evidence, check, says)
	}
	if code != 1 || !r.Blocked || r.FirstCause == nil || *r.FirstCause != check {
		t.Errorf("%s: exit %d, blocked %v, firstCause %v; want 1, true, %s", ns, code, r.Blocked, r.FirstCause, check)
	}
	if c.Fix == "" {
		t.Errorf("%s: the first cause has no fix", ns)
	}
	if !strings.Contains(text, "first blocking cause: "+c.Title) {
		t.Errorf("%s: the text does not start from the first cause", ns)
	}
}

// waitRunning waits for n Running pods of app.
func waitRunning(t *testing.T, ns, app string, n int, within time.Duration) []corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		pods := waitPods(t, ns, map[string]string{"app": app}, n, within)
		running := 0
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		if running == n {
			return pods
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d of %d pods Running (events: %s)", ns, running, n, eventSummary(t, ns))
		}
		time.Sleep(time.Second)
	}
}

func TestNode8Doctor(t *testing.T) {
	requireNode(t)
	dir := doctorPath(t)
	hold := trainer([]string{"--hold"}, nil)

	t.Run("healthy", func(t *testing.T) {
		ns := newNamespace(t, "dr-ok")
		apply(t, ns, headlessServiceYAML("ok", "app", "ok")+"---\n"+trainStatefulSetYAML("ok", 2, nil, hold))
		res, _ := waitAllReduce(t, ns, map[string]string{"app": "ok"}, 2, 1, 3*time.Minute)
		checkRanks(t, ns, res, 2, "ok-0.ok")
		r, code, text := diagnose(t, dir, ns, "sts/ok", 60*time.Second, func(r doctorReport, code int) bool { return code == 0 })
		if code != 0 || r.Blocked {
			t.Errorf("healthy job: exit %d, blocked %v; want 0, false", code, r.Blocked)
		}
		for _, c := range r.Checks {
			if c.State != "ok" {
				t.Errorf("healthy job: %s is %s: %s (%s)", c.Check, c.State, c.Title, c.Evidence)
			}
		}
		if !strings.Contains(text, "nothing wrong found") || !strings.Contains(text, "cannot see: the training code") {
			t.Errorf("healthy job: the text does not say nothing was found and what it cannot see")
		}
		if !strings.Contains(text, "cluster domain "+clusterDomain) {
			t.Errorf("healthy job: the text does not name the cluster domain %s", clusterDomain)
		}
	})

	t.Run("service-missing", func(t *testing.T) {
		ns := newNamespace(t, "dr-nosvc")
		apply(t, ns, trainStatefulSetYAML("nosvc", 2, nil, hold))
		waitRunning(t, ns, "nosvc", 2, 2*time.Minute)
		expectCause(t, dir, ns, "statefulset/nosvc", "service", "Service nosvc does not exist")
	})

	t.Run("service-selector", func(t *testing.T) {
		ns := newNamespace(t, "dr-sel")
		apply(t, ns, headlessServiceYAML("sel", "app", "other")+"---\n"+trainStatefulSetYAML("sel", 2, nil, hold))
		waitRunning(t, ns, "sel", 2, 2*time.Minute)
		expectCause(t, dir, ns, "sts/sel", "service", "selector app=other; the pod has app=sel")
	})

	t.Run("rank0-pending", func(t *testing.T) {
		ns := newNamespace(t, "dr-pend")
		big := hold + "        resources: {requests: {cpu: \"500\"}}\n"
		apply(t, ns, headlessServiceYAML("pend", "app", "pend")+"---\n"+trainStatefulSetYAML("pend", 2, nil, big))
		waitPods(t, ns, map[string]string{"app": "pend"}, 2, time.Minute)
		expectCause(t, dir, ns, "sts/pend", "scheduling", "Insufficient cpu")
	})

	t.Run("scaled", func(t *testing.T) {
		ns := newNamespace(t, "dr-scale")
		apply(t, ns, headlessServiceYAML("grow", "app", "grow")+"---\n"+trainStatefulSetYAML("grow", 2, nil, hold))
		waitRunning(t, ns, "grow", 2, 2*time.Minute)
		out, stderr, err := kubectl(t, "", "-n", ns, "scale", "statefulset/grow", "--replicas=3")
		if err != nil {
			t.Fatalf("kubectl scale: %v %s%s", err, out, stderr)
		}
		t.Logf("kubectl scale: %s%s", strings.TrimSpace(out), strings.TrimSpace(stderr))
		waitRunning(t, ns, "grow", 3, 2*time.Minute)
		expectCause(t, dir, ns, "sts/grow", "world", "they wait for a world of 2, it now has 3")
	})

	// A container's own RANK: since the rule that a per-rank variable set to one
	// literal for two or more ranks is certainly wrong, the StatefulSet is refused
	// at apply, which is what a user meets first. The same template applied at 0
	// replicas (nothing to judge: no rank) and scaled to 2 gets past /validate
	// (a scale only warns); then /mutate refuses rank 1's pod (its RANK=0 is rank
	// 0's), the controller retries it for ever, and rank 0 waits: doctor names
	// the missing rank and quotes distenv's denial from the FailedCreate event.
	t.Run("own-rank", func(t *testing.T) {
		ns := newNamespace(t, "dr-rank")
		own := hold + "        env: [{name: RANK, value: \"0\"}]\n"
		svc := headlessServiceYAML("own", "app", "own") + "---\n"
		stderr, err := kubectlApply(t, ns, svc+trainStatefulSetYAML("own", 2, nil, own))
		if err == nil || !strings.Contains(err.Error(), "sets RANK=0 for each of its 2 ranks") {
			t.Fatalf("kubectl apply of 2 ranks with RANK=0: %v (%s); want distenv's refusal naming RANK", err, stderr)
		}
		t.Logf("kubectl apply (2 replicas, RANK=0): %v", err)
		apply(t, ns, svc+trainStatefulSetYAML("own", 0, nil, own))
		out, serr, err := kubectl(t, "", "-n", ns, "scale", "statefulset/own", "--replicas=2")
		if err != nil {
			t.Fatalf("kubectl scale: %v %s%s", err, out, serr)
		}
		// in a pod the container's own value wins: both are created, warned, and hang
		waitRunning(t, ns, "own", 2, 2*time.Minute)
		expectCause(t, dir, ns, "sts/own", "own-env", "own-1/trainer: RANK=0 (distenv's: 1)")
	})

	t.Run("netpol", func(t *testing.T) {
		ns := newNamespace(t, "dr-np")
		policy := `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: web-only}
spec:
  podSelector: {matchLabels: {app: np}}
  policyTypes: [Ingress]
  ingress: [{ports: [{protocol: TCP, port: 8080}]}]
---
`
		apply(t, ns, policy+headlessServiceYAML("np", "app", "np")+"---\n"+trainStatefulSetYAML("np", 2, nil, hold))
		waitRunning(t, ns, "np", 2, 2*time.Minute)
		expectCause(t, dir, ns, "sts/np", "netpol", "NetworkPolicy web-only drops connections to rank 0 on port 29500")
	})

	// Last: the chart's caBundle is taken out of the MutatingWebhookConfiguration
	// (as when cert-manager's injector never wrote it), and put back after.
	t.Run("ca-missing", func(t *testing.T) {
		ctx := ctxT(t)
		mwc, err := env.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, chartRelease, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		idx := -1
		for i, w := range mwc.Webhooks {
			if w.Name == chartPodHook {
				idx = i
			}
		}
		if idx < 0 || len(mwc.Webhooks[idx].ClientConfig.CABundle) == 0 {
			t.Fatalf("the chart's configuration has no %s with a caBundle", chartPodHook)
		}
		ca := mwc.Webhooks[idx].ClientConfig.CABundle
		patch := func(v any) {
			b, _ := json.Marshal([]map[string]any{{"op": "replace", "path": fmt.Sprintf("/webhooks/%d/clientConfig/caBundle", idx), "value": v}})
			if _, err := env.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Patch(ctx, chartRelease, types.JSONPatchType, b, metav1.PatchOptions{}); err != nil {
				t.Fatalf("patch caBundle: %v", err)
			}
		}
		patch("")
		t.Cleanup(func() {
			patch(ca)
			// the API server's webhook client picks the CA up again: wait until an opted-in pod is admitted
			waitWebhookServes(t)
		})
		ns := newNamespace(t, "dr-ca")
		apply(t, ns, headlessServiceYAML("noca", "app", "noca")+"---\n"+trainStatefulSetYAML("noca", 2, nil, hold))
		waitEvent(t, ns, "StatefulSet", "noca", "FailedCreate", "", 2*time.Minute)
		expectCause(t, dir, ns, "sts/noca", "webhook", "clientConfig.caBundle is empty")
		r, _, _ := diagnose(t, dir, ns, "sts/noca", 0, func(doctorReport, int) bool { return true })
		quoted := false
		for _, c := range r.Checks {
			quoted = quoted || (c.Check == "opt-in" && strings.Contains(c.Evidence, "FailedCreate") && strings.Contains(c.Evidence, "pods.distenv.dev"))
		}
		if !quoted {
			t.Errorf("doctor does not quote the FailedCreate event naming pods.distenv.dev")
		}
	})
}

// waitWebhookServes waits until distenv injects an opted-in pod again (dry-run create).
func waitWebhookServes(t *testing.T) {
	t.Helper()
	ns := newNamespace(t, "dr-back")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "probe-0", Labels: map[string]string{"distenv.dev/inject": "true"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: node.train}}}}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err := env.cs.CoreV1().Pods(ns).Create(ctxT(t), pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		// a bare pod is denied by distenv itself once the API server trusts it again
		if err != nil && strings.Contains(err.Error(), "distenv:") {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("distenv's webhook did not answer again within 2 min after the caBundle came back: %v", err)
			return
		}
		time.Sleep(time.Second)
	}
}
