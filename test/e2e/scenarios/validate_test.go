package scenarios

// /validate through the real API server: a ValidatingWebhookConfiguration made
// as the chart makes it (its rules and matchConditions read from the chart's
// own charts/distenv/files/validate-rules.yaml and opt-in.cel, so the real API
// server compiles and evaluates the CEL the chart ships), registered for one test namespace
// only and removed with it. Workloads are applied with kubectl, and the
// warnings are read as kubectl prints them.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// chartFile is one of the chart's files made from the kind table
// (charts/distenv/files/, written by scripts/chart-files.sh).
func chartFile(t *testing.T, name string) []byte {
	t.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("runtime.Caller: no file name")
	}
	path := filepath.Join(filepath.Dir(self), "..", "..", "..", "charts", "distenv", "files", name)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the chart's %s: %v", name, err)
	}
	return b
}

// optInCEL is the chart's matchCondition expression, as `>-` folds it.
func optInCEL(t *testing.T) string {
	t.Helper()
	return strings.TrimSpace(strings.Join(strings.Split(string(chartFile(t, "opt-in.cel")), "\n"), " "))
}

// validateRules are the chart's rules of the /validate webhook, one per kind.
func validateRules(t *testing.T) []admissionregistrationv1.RuleWithOperations {
	t.Helper()
	var rules []admissionregistrationv1.RuleWithOperations
	if err := yaml.Unmarshal(chartFile(t, "validate-rules.yaml"), &rules); err != nil || len(rules) == 0 {
		t.Fatalf("the chart's validate-rules.yaml: %v (%d rules)", err, len(rules))
	}
	return rules
}

// registerValidating registers distenv's /validate for namespace ns alone (the
// chart's rules and matchConditions), waits until the API server calls it, and
// removes it when the test ends.
func registerValidating(t *testing.T, ns string) {
	t.Helper()
	ctx := ctxT(t)
	caPEM, err := os.ReadFile(filepath.Join(env.whDir, "certs", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("https://127.0.0.1:%d/validate", env.whPort)
	sideEffects := admissionregistrationv1.SideEffectClassNone
	fail := admissionregistrationv1.Fail
	equivalent := admissionregistrationv1.Equivalent
	timeout := int32(10)
	rules := validateRules(t)
	name := "distenv-validate-" + ns
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "workloads.distenv.dev",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM},
			Rules:                   rules,
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			MatchConditions:         []admissionregistrationv1.MatchCondition{{Name: "pod-template-opts-in", Expression: optInCEL(t)}},
			SideEffects:             &sideEffects,
			FailurePolicy:           &fail,
			MatchPolicy:             &equivalent,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          &timeout,
		}},
	}
	if _, err := env.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatalf("ValidatingWebhookConfiguration (matchConditions from the chart): %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = env.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{})
	})
	// Until the API server uses it: a server-side dry run of a StatefulSet with a
	// bad annotation is refused by distenv.
	probe := statefulSetYAML("probe", false, "", map[string]string{"distenv.dev/port": "0"})
	var last string
	for i := 0; i < 120; i++ {
		_, stderr, err := kubectlIn(t, probe, "-n", ns, "apply", "--dry-run=server", "-f", "-")
		if err != nil && strings.Contains(stderr, "distenv:") {
			return
		}
		last = stderr
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("the API server does not call /validate after 30 s (last: %s)", last)
}

// kubectlIn runs the control plane's kubectl with the admin kubeconfig, stdin
// given; returns stdout and stderr (where kubectl prints admission warnings).
func kubectlIn(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctxT(t), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(env.dir, "bin", "kubectl"),
		append([]string{"--kubeconfig", os.Getenv("KUBECONFIG")}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// statefulSetYAML is an opted-in StatefulSet of two pods (Parallel, Service ddp).
func statefulSetYAML(name string, hostNetwork bool, dnsPolicy string, anns map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: %s
spec:
  replicas: 2
  serviceName: ddp
  podManagementPolicy: Parallel
  selector:
    matchLabels: {app: %s}
  template:
    metadata:
      labels: {app: %s, distenv.dev/inject: "true"}
`, name, name, name)
	if len(anns) > 0 {
		b.WriteString("      annotations:\n")
		for k, v := range anns {
			fmt.Fprintf(&b, "        %s: %q\n", k, v)
		}
	}
	b.WriteString("    spec:\n")
	if hostNetwork {
		b.WriteString("      hostNetwork: true\n")
	}
	if dnsPolicy != "" {
		fmt.Fprintf(&b, "      dnsPolicy: %s\n", dnsPolicy)
	}
	b.WriteString("      containers:\n      - name: trainer\n        image: registry.invalid/trainer:1\n")
	return b.String()
}

const hostNetworkWarning = "Warning: distenv: hostNetwork needs dnsPolicy: ClusterFirstWithHostNet, or MASTER_ADDR will not resolve"

// A hostNetwork StatefulSet (dnsPolicy left to the API server's default,
// ClusterFirst) is warned at `kubectl apply`; with ClusterFirstWithHostNet it is
// not (other warnings, such as the Service checks this harness's RBAC does not
// allow, are not this test's).
func TestValidateHostNetworkWarnedAtApply(t *testing.T) {
	ns := newNamespace(t, "hostnet")
	headlessService(t, ns, "ddp", map[string]string{injectLabel: "true"})
	registerValidating(t, ns)

	_, warn, err := kubectlIn(t, statefulSetYAML("hostnet", true, "", nil), "-n", ns, "apply", "-f", "-")
	if err != nil {
		t.Fatalf("kubectl apply: %v: %s", err, warn)
	}
	if !strings.Contains(warn, hostNetworkWarning) {
		t.Errorf("kubectl apply of a hostNetwork StatefulSet printed %q, want %q", warn, hostNetworkWarning)
	} else {
		t.Logf("kubectl apply: %s", strings.TrimSpace(warn))
	}

	_, warn, err = kubectlIn(t, statefulSetYAML("hostnet-ok", true, "ClusterFirstWithHostNet", nil),
		"-n", ns, "apply", "-f", "-")
	if err != nil {
		t.Fatalf("kubectl apply: %v: %s", err, warn)
	}
	// the DNS warning only: a hostNetwork template without anti-affinity is warned of its ports
	if strings.Contains(warn, hostNetworkWarning) || strings.Contains(warn, "dnsPolicy") {
		t.Errorf("kubectl apply of a hostNetwork StatefulSet with ClusterFirstWithHostNet printed %q, want no DNS warning", warn)
	}
}

// leaderOnlyLWS is a LeaderWorkerSet whose leader template alone opts in.
func leaderOnlyLWS(name, leaderExtra, leaderAnns string) string {
	return fmt.Sprintf(`apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: %s
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      metadata:
        labels: {distenv.dev/inject: "true"}
        annotations: {%s}
      spec:
%s        containers:
        - name: leader
          image: registry.invalid/serve:1
    workerTemplate:
      spec:
        containers:
        - name: worker
          image: registry.invalid/serve:1
`, name, leaderAnns, leaderExtra)
}

// A LeaderWorkerSet whose leader template alone opts in reaches /validate
// through the chart's matchConditions: a bad annotation on the leader is
// refused, and a hostNetwork leader is warned, naming the leader template (and
// the worker template, whose pods the group's world counts but which does not
// opt in).
// Neither could come from the pod webhook (no pod is created at apply).
func TestValidateLeaderOnlyLeaderWorkerSet(t *testing.T) {
	needManager(t, "lws")
	ns := newNamespace(t, "lwsleader")
	registerValidating(t, ns)

	_, stderr, err := kubectlIn(t, leaderOnlyLWS("bad", "", `distenv.dev/port: "0"`), "-n", ns, "apply", "-f", "-")
	want := `distenv: leader template: annotation distenv.dev/port: "0" is not a port number`
	if err == nil || !strings.Contains(stderr, want) {
		t.Errorf("kubectl apply of a leader-only LeaderWorkerSet with port 0: err %v, stderr %q; want refused with %q",
			err, stderr, want)
	} else {
		t.Logf("kubectl apply (refused): %s", strings.TrimSpace(stderr))
	}

	_, warn, err := kubectlIn(t, leaderOnlyLWS("hostnet", "        hostNetwork: true\n", ""), "-n", ns, "apply", "-f", "-")
	if err != nil {
		t.Fatalf("kubectl apply: %v: %s", err, warn)
	}
	for _, want := range []string{
		"Warning: distenv: leader template: hostNetwork needs dnsPolicy: ClusterFirstWithHostNet",
		"Warning: distenv: worker template: no label distenv.dev/inject, so its pods get no env, yet WORLD_SIZE counts them",
	} {
		if !strings.Contains(warn, want) {
			t.Errorf("kubectl apply of a leader-only hostNetwork LeaderWorkerSet printed %q, want %q", warn, want)
		}
	}
	t.Logf("kubectl apply: %s", strings.TrimSpace(warn))
}

// A container whose MASTER_ADDR comes from valueFrom (the pod's IP) without
// PET_MASTER_ADDR, which distenv derives from it: every pod would be denied, so
// `kubectl apply` is refused with the message the pods would get; with
// PET_MASTER_ADDR set too the StatefulSet is accepted.
func TestValidateMasterAddrValueFromDeniedAtApply(t *testing.T) {
	ns := newNamespace(t, "masterfrom")
	registerValidating(t, ns)
	podIP := "        env:\n        - name: MASTER_ADDR\n" +
		"          valueFrom: {fieldRef: {fieldPath: status.podIP}}\n"

	_, stderr, err := kubectlIn(t, statefulSetYAML("from", false, "", nil)+podIP, "-n", ns, "apply", "-f", "-")
	want := "distenv: container trainer sets MASTER_ADDR from valueFrom or a $(reference), which distenv " +
		"cannot read at admission"
	if err == nil || !strings.Contains(stderr, want) {
		t.Errorf("kubectl apply of a StatefulSet whose MASTER_ADDR comes from valueFrom: err %v, stderr %q; "+
			"want refused with %q", err, stderr, want)
	} else {
		t.Logf("kubectl apply (refused): %s", strings.TrimSpace(stderr))
	}

	derived := podIP + "        - name: PET_MASTER_ADDR\n" +
		"          valueFrom: {fieldRef: {fieldPath: status.podIP}}\n"
	_, stderr, err = kubectlIn(t, statefulSetYAML("from-derived", false, "", nil)+derived,
		"-n", ns, "apply", "-f", "-")
	if err != nil {
		t.Errorf("kubectl apply of a StatefulSet that sets PET_MASTER_ADDR too: %v: %s", err, stderr)
	}
}
