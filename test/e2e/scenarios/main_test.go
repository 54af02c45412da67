// Package scenarios holds the end-to-end tests of distenv against a real
// kube-apiserver and kube-controller-manager (started by ../cluster.sh), and, for
// JobSets and LeaderWorkerSets, their real controller managers (cluster.sh with
// DISTENV_E2E_MANAGERS).
//
// TestMain sets distenv up the way a cluster operator would: a serving
// certificate from `distenv-webhook certs`, a ServiceAccount whose ClusterRole
// only allows what the chart's does (get on statefulsets, jobs, jobsets and
// services, list on networkpolicies), a kubeconfig with that
// account's token for `distenv-webhook serve --kubeconfig`, and a
// MutatingWebhookConfiguration pointing at the webhook over HTTPS. Each test then
// creates real workloads and checks what the API server stored.
//
// Required environment (printed by `cluster.sh up`): KUBECONFIG (admin),
// DISTENV_E2E_DIR, DISTENV_E2E_SERVER, DISTENV_E2E_CA, DISTENV_E2E_AUDIT_LOG; and
// DISTENV_WEBHOOK, the path of the distenv-webhook binary.
package scenarios

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	injectLabel     = "distenv.dev/inject"
	injectedAnn     = "distenv.dev/injected"
	webhookNS       = "distenv-system"
	webhookSA       = "distenv"
	webhookSvc      = "distenv"
	webhookConfName = "distenv"
	webhookName     = "inject.distenv.dev"
	lookupRole      = "distenv-lookup"
)

// env is the harness state shared by the tests.
var env struct {
	dir       string
	server    string
	caFile    string
	auditLog  string
	bin       string
	admin     *rest.Config
	cs        *kubernetes.Clientset
	whDir     string
	whPort    int
	whCmd     *exec.Cmd
	whDone    chan error
	whLogFile *os.File
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if nodeTier() {
		return runNode(m) // node_main_test.go: distenv installed by its chart, on a real node
	}
	if err := setup(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e setup: %v\n", err)
		teardown()
		return 1
	}
	code := m.Run()
	if err := teardown(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e teardown: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

func need(name string) (string, error) {
	v := os.Getenv(name)
	if v == "" {
		return "", fmt.Errorf("%s is not set: start the control plane with test/e2e/cluster.sh up (or run test/e2e/run.sh)", name)
	}
	return v, nil
}

// envVar is a required environment variable and where its value goes.
type envVar struct {
	dst  *string
	name string
}

// connect reads what `cluster.sh up` prints, and the more variables named, and
// makes the admin client.
func connect(more ...envVar) error {
	var err error
	vars := append([]envVar{
		{&env.dir, "DISTENV_E2E_DIR"}, {&env.server, "DISTENV_E2E_SERVER"}, {&env.caFile, "DISTENV_E2E_CA"},
		{&env.auditLog, "DISTENV_E2E_AUDIT_LOG"},
	}, more...)
	for _, p := range vars {
		if *p.dst, err = need(p.name); err != nil {
			return err
		}
	}
	kc, err := need("KUBECONFIG")
	if err != nil {
		return err
	}
	if env.admin, err = clientcmd.BuildConfigFromFlags("", kc); err != nil {
		return fmt.Errorf("admin kubeconfig: %w", err)
	}
	env.admin.QPS, env.admin.Burst = 200, 400
	env.cs, err = kubernetes.NewForConfig(env.admin)
	return err
}

func setup() error {
	if err := connect(envVar{&env.bin, "DISTENV_WEBHOOK"}); err != nil {
		return err
	}
	env.whDir = filepath.Join(env.dir, "webhook")
	if err := os.MkdirAll(env.whDir, 0o700); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// 1. Serving certificate, made by the webhook's own `certs` command.
	certDir := filepath.Join(env.whDir, "certs")
	out, err := exec.CommandContext(ctx, env.bin, "certs", "--service", webhookSvc, "--namespace", webhookNS,
		"--out", certDir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("distenv-webhook certs: %v: %s", err, out)
	}
	for _, f := range []string{"ca.crt", "tls.crt", "tls.key"} {
		if _, err := os.Stat(filepath.Join(certDir, f)); err != nil {
			return fmt.Errorf("distenv-webhook certs did not write %s: %w", f, err)
		}
	}

	// 2. The webhook's identity: a ServiceAccount with the chart's ClusterRole.
	if err := setupRBAC(ctx); err != nil {
		return fmt.Errorf("RBAC: %w", err)
	}
	if err := writeWebhookKubeconfig(ctx); err != nil {
		return fmt.Errorf("webhook kubeconfig: %w", err)
	}

	// 3. The webhook itself, over HTTPS on loopback.
	if env.whPort, err = freePort(); err != nil {
		return err
	}
	if err := startWebhook(); err != nil {
		return err
	}

	// 4. The MutatingWebhookConfiguration, then wait until the API server uses it.
	if err := registerWebhook(ctx, filepath.Join(certDir, "ca.crt")); err != nil {
		return fmt.Errorf("MutatingWebhookConfiguration: %w", err)
	}
	return waitWebhookActive(ctx)
}

func setupRBAC(ctx context.Context) error {
	cs := env.cs
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: webhookNS}},
		metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if _, err := cs.CoreV1().ServiceAccounts(webhookNS).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: webhookSA}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: lookupRole},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"get"}},
			{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"get"}},
			// As the chart's rbac.yaml: a JobSet's replicated Jobs are read from the JobSet.
			{APIGroups: []string{"jobset.x-k8s.io"}, Resources: []string{"jobsets"}, Verbs: []string{"get"}},
			// and, for the checks of /validate, the Service and the namespace's NetworkPolicies
			{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get"}},
			{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"networkpolicies"}, Verbs: []string{"list"}},
		},
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: lookupRole},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: lookupRole},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: webhookSA, Namespace: webhookNS}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

func writeWebhookKubeconfig(ctx context.Context) error {
	exp := int64(3 * 3600)
	tr, err := env.cs.CoreV1().ServiceAccounts(webhookNS).CreateToken(ctx, webhookSA, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	token := tr.Status.Token

	// The identity must be able to get statefulsets, jobs, jobsets and services and
	// list networkpolicies, and nothing more.
	cfg := &rest.Config{Host: env.server, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAFile: env.caFile}}
	sacs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, c := range []struct {
		group, resource, verb string
		want                  bool
	}{
		{"apps", "statefulsets", "get", true}, {"batch", "jobs", "get", true},
		{"jobset.x-k8s.io", "jobsets", "get", true}, {"jobset.x-k8s.io", "jobsets", "list", false},
		{"leaderworkerset.x-k8s.io", "leaderworkersets", "get", false},
		{"apps", "statefulsets", "list", false}, {"", "pods", "get", false}, {"", "secrets", "get", false},
		{"", "services", "get", true}, {"", "services", "list", false},
		{"networking.k8s.io", "networkpolicies", "list", true}, {"networking.k8s.io", "networkpolicies", "get", false},
		{"networking.k8s.io", "networkpolicies", "watch", false},
	} {
		r, err := sacs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: "default", Group: c.group, Resource: c.resource, Verb: c.verb}}}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("access review: %w", err)
		}
		if r.Status.Allowed != c.want {
			return fmt.Errorf("webhook identity: %s %s.%s allowed=%v, want %v", c.verb, c.resource, c.group, r.Status.Allowed, c.want)
		}
	}

	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    certificate-authority: %s
contexts:
- name: distenv
  context:
    cluster: e2e
    user: distenv
    namespace: %s
current-context: distenv
users:
- name: distenv
  user:
    token: %s
`, env.server, env.caFile, webhookNS, token)
	return os.WriteFile(filepath.Join(env.whDir, "webhook.kubeconfig"), []byte(kc), 0o600)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// hostResolvConf is a resolv.conf outside a cluster: a search list without svc.<domain>.
const hostResolvConf = "nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch example.internal\n"

func webhookPIDFile() string { return filepath.Join(env.dir, "pids", "distenv-webhook.pid") }

// startWebhook starts `distenv-webhook serve` and waits until it completes a TLS
// handshake that verifies against the CA from `certs` for 127.0.0.1.
func startWebhook() error {
	certDir := filepath.Join(env.whDir, "certs")
	logf, err := os.OpenFile(filepath.Join(env.dir, "logs", "webhook.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	// The API server keeps its pooled keep-alive connections to the webhook open,
	// and the drain serves them (Connection: close on each answer) until
	// server.drainTimeoutSeconds: 3 s here, so that a stop takes 3 s, not 25.
	cfgPath := filepath.Join(env.whDir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte("server:\n  drainTimeoutSeconds: 3\n"), 0o644); err != nil {
		logf.Close()
		return err
	}
	// No clusterDomain in the config: serve reads it from a resolv.conf, here a
	// host's without svc.<domain> (its test hook; never this machine's, which in a
	// CI pod would name that cluster's domain), and falls back to cluster.local.
	resolv := filepath.Join(env.whDir, "resolv.conf")
	if err := os.WriteFile(resolv, []byte(hostResolvConf), 0o644); err != nil {
		logf.Close()
		return err
	}
	cmd := exec.Command(env.bin, "serve", "--config", cfgPath,
		"--listen", fmt.Sprintf("127.0.0.1:%d", env.whPort),
		"--tls-cert", filepath.Join(certDir, "tls.crt"),
		"--tls-key", filepath.Join(certDir, "tls.key"),
		"--kubeconfig", filepath.Join(env.whDir, "webhook.kubeconfig"))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "DISTENV_RESOLV_CONF="+resolv)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start distenv-webhook: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	env.whCmd, env.whDone, env.whLogFile = cmd, done, logf
	// Recorded so that `cluster.sh down` stops it even if this process dies.
	_ = os.WriteFile(webhookPIDFile(), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644)

	caPEM, err := os.ReadFile(filepath.Join(certDir, "ca.crt"))
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return fmt.Errorf("no certificate in %s/ca.crt", certDir)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", env.whPort)
	var lastErr error
	for i := 0; i < 150; i++ {
		select {
		case err := <-done:
			done <- err
			return fmt.Errorf("distenv-webhook serve exited at start: %v (log: %s/logs/webhook.log)", err, env.dir)
		default:
		}
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr,
			&tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}})
		if err == nil {
			conn.Close()
			return nil
		}
		lastErr = err
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("distenv-webhook not serving TLS on %s after 30 s: %v", addr, lastErr)
}

// stopWebhook sends SIGTERM and waits (at most 20 s) for the exit status.
func stopWebhook() error {
	if env.whCmd == nil {
		return nil
	}
	defer func() {
		env.whCmd = nil
		env.whLogFile.Close()
		os.Remove(webhookPIDFile())
	}()
	_ = env.whCmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-env.whDone:
		if err != nil {
			return fmt.Errorf("distenv-webhook serve: exit after SIGTERM: %v (want status 0)", err)
		}
		return nil
	case <-time.After(20 * time.Second):
		_ = env.whCmd.Process.Kill()
		<-env.whDone
		return fmt.Errorf("distenv-webhook serve did not exit within 20 s of SIGTERM")
	}
}

func registerWebhook(ctx context.Context, caFile string) error {
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	url := fmt.Sprintf("https://127.0.0.1:%d/mutate", env.whPort)
	sideEffects := admissionregistrationv1.SideEffectClassNone
	reinvoke := admissionregistrationv1.IfNeededReinvocationPolicy
	fail := admissionregistrationv1.Fail
	timeout := int32(10)
	scope := admissionregistrationv1.NamespacedScope
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: webhookConfName},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:         webhookName,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
					Resources: []string{"pods"}, Scope: &scope},
			}},
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{injectLabel: "true"}},
			SideEffects:             &sideEffects,
			ReinvocationPolicy:      &reinvoke,
			FailurePolicy:           &fail,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          &timeout,
		}},
	}
	_ = env.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, webhookConfName, metav1.DeleteOptions{})
	_, err = env.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{})
	return err
}

// waitWebhookActive dry-runs a labelled bare pod until distenv answers it (a bare
// pod is not a StatefulSet or Job pod, so distenv denies it with "distenv:").
func waitWebhookActive(ctx context.Context) error {
	if err := waitDefaultSA(ctx, webhookNS); err != nil {
		return err
	}
	var last string
	for i := 0; i < 120; i++ {
		pod := bareProbePod()
		_, err := env.cs.CoreV1().Pods(webhookNS).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), "distenv:") {
			return nil
		}
		last = fmt.Sprint(err)
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("the API server does not call distenv after 30 s (last answer to a probe pod: %s)", last)
}

func bareProbePod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "probe", Labels: map[string]string{injectLabel: "true"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
}

func waitDefaultSA(ctx context.Context, ns string) error {
	for i := 0; i < 240; i++ {
		if _, err := env.cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err == nil {
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("ServiceAccount %s/default not created after 60 s (is the serviceaccount controller running?)", ns)
}

func teardown() error {
	var errs []string
	if env.cs != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := env.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, webhookConfName,
			metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err.Error())
		}
	}
	if err := stopWebhook(); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}
