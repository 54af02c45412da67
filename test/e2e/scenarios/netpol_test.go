package scenarios

// NetworkPolicies at apply time: distenv's /validate, registered for one
// namespace's StatefulSets, lists the namespace's NetworkPolicies through the
// webhook's own ServiceAccount (list networkpolicies, as the chart grants) and
// warns when one drops the rendezvous port between the pods; the warnings are
// read as kubectl prints them.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// kubectlApply runs the control plane's kubectl (admin) `apply -f -` in ns with
// extra flags; returns its stderr, where kubectl prints admission warnings.
func kubectlApply(t *testing.T, ns, manifest string, flags ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"-n", ns, "apply", "-f", "-"}, flags...)
	cmd := exec.CommandContext(ctx, filepath.Join(env.dir, "bin", "kubectl"), args...)
	cmd.Stdin = strings.NewReader(manifest)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%v: %s%s", err, out.String(), errb.String())
	}
	return errb.String(), err
}

// distenvWarnings are the lines of kubectl's stderr that are distenv's warnings.
func distenvWarnings(stderr string) []string {
	var w []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "Warning: distenv:") {
			w = append(w, strings.TrimPrefix(l, "Warning: "))
		}
	}
	return w
}

// registerValidate points a ValidatingWebhookConfiguration for StatefulSets of
// namespace ns at distenv's /validate (the chart's shape, narrowed to ns so that
// no other test sees it), deleted when the test ends.
func registerValidate(t *testing.T, ns string) {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(env.whDir, "certs", "ca.crt"))
	if err != nil {
		t.Fatalf("webhook CA: %v", err)
	}
	url := fmt.Sprintf("https://127.0.0.1:%d/validate", env.whPort)
	name := "distenv-validate-" + ns
	none := admissionregistrationv1.SideEffectClassNone
	fail := admissionregistrationv1.Fail
	timeout := int32(10)
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         "validate.distenv.dev",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"},
					Resources: []string{"statefulsets"}},
			}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			SideEffects:             &none,
			FailurePolicy:           &fail,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          &timeout,
		}},
	}
	if _, err := env.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctxT(t), cfg,
		metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ValidatingWebhookConfiguration: %v", err)
	}
	t.Cleanup(func() {
		_ = env.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), name,
			metav1.DeleteOptions{})
	})
}

func netpolStatefulSet(name string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: %s}
spec:
  serviceName: ddp
  replicas: 2
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: ddp}}
  template:
    metadata:
      labels: {app: ddp, distenv.dev/inject: "true"}
    spec:
      containers:
      - name: trainer
        image: registry.invalid/trainer:1
        ports: [{name: rdzv, containerPort: 29500}]
`, name)
}

// TestNetworkPolicyDropsRendezvous: in a namespace with the docs' default-deny
// ingress policy, applying an opted-in StatefulSet prints distenv's warning
// naming the policy and the port; once a policy admits the job's own pods on
// the port (a named port), the next one applies without a warning.
func TestNetworkPolicyDropsRendezvous(t *testing.T) {
	ctx := ctxT(t)
	ns := newNamespace(t, "netpol")
	// the Service passes every check of /validate, so the only warnings are the policies'
	if _, err := env.cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "ddp"},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, PublishNotReadyAddresses: true,
			Selector: map[string]string{"app": "ddp"}, Ports: []corev1.ServicePort{{Name: "rdzv", Port: 29500}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Service: %v", err)
	}
	deny := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "default-deny-ingress"},
		Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}},
	}
	if _, err := env.cs.NetworkingV1().NetworkPolicies(ns).Create(ctx, deny, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create NetworkPolicy: %v", err)
	}
	registerValidate(t, ns)

	// The API server takes up a new webhook configuration within a second or so:
	// dry-run until distenv answers (a bounded wait, not a timing assertion).
	var warn string
	for i := 0; i < 120; i++ {
		stderr, err := kubectlApply(t, ns, netpolStatefulSet("ddp"), "--dry-run=server")
		if err != nil {
			t.Fatalf("kubectl apply --dry-run=server: %v", err)
		}
		if len(distenvWarnings(stderr)) > 0 {
			warn = stderr
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if warn == "" {
		t.Fatalf("no distenv warning at kubectl apply after 30 s (log: %s/logs/webhook.log)", env.dir)
	}
	stderr, err := kubectlApply(t, ns, netpolStatefulSet("ddp"))
	if err != nil {
		t.Fatalf("kubectl apply: %v", err)
	}
	want := fmt.Sprintf("distenv: NetworkPolicy %s/default-deny-ingress drops port 29500 between pods of "+
		"StatefulSet ddp: admit it", ns)
	if got := distenvWarnings(stderr); len(got) != 1 || got[0] != want {
		t.Errorf("kubectl apply printed %q, want the one warning %q", stderr, want)
	} else {
		t.Logf("kubectl apply: %s", strings.TrimSpace(stderr))
	}

	// Policies are additive: one that admits the job's own pods on the port lets them meet.
	tcp := corev1.ProtocolTCP
	port := intstr.FromString("rdzv")
	admit := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "ddp-rendezvous"},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "ddp"}},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{"app": "ddp"}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}},
			}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		},
	}
	if _, err := env.cs.NetworkingV1().NetworkPolicies(ns).Create(ctx, admit, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create NetworkPolicy: %v", err)
	}
	stderr, err = kubectlApply(t, ns, netpolStatefulSet("ddp2"))
	if err != nil {
		t.Fatalf("kubectl apply: %v", err)
	}
	if got := distenvWarnings(stderr); len(got) != 0 {
		t.Errorf("with %s admitting the pods, kubectl apply printed %q, want no warning", admit.Name, stderr)
	}
}
