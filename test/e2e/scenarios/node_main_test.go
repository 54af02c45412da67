package scenarios

// The node tier (test/e2e-node/run.sh, `make e2e-node`): the same package, run
// with DISTENV_E2E_NODE=1 against a control plane with one real node (kubelet,
// containerd, CoreDNS, kube-proxy). distenv is not started on the host here: it is
// installed with Helm from charts/distenv and runs as the chart's Deployment; the
// tests are the TestNode* ones (node_test.go), which skip in the host tier.
//
// Extra environment (run.sh sets it): DISTENV_HELM (helm binary), DISTENV_CHART
// (chart directory), DISTENV_NODE_IMAGE_DISTENV and DISTENV_NODE_IMAGE_TRAIN
// (image references imported into the node's containerd), DISTENV_NODE_CLUSTER_DOMAIN
// (the domain kubelet and CoreDNS use: not cluster.local).

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	chartRelease   = "distenv"
	chartNS        = "distenv-system"
	chartPodHook   = "pods.distenv.dev"
	nodeFigureFile = "DISTENV_E2E_FIGURES_OUT"
)

var node struct {
	helm, chart          string
	distenvImage, train  string
	kubectl, repo, tag   string
	installArgs          []string
	installedAt, readyAt time.Time
}

func nodeTier() bool { return os.Getenv("DISTENV_E2E_NODE") == "1" }

// requireNode skips a TestNode* test in the host tier.
func requireNode(t *testing.T) {
	t.Helper()
	if !nodeTier() {
		t.Skip("node tier only (test/e2e-node/run.sh)")
	}
}

func runNode(m *testing.M) int {
	if err := setupNode(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e-node setup: %v\n", err)
		return 1
	}
	return m.Run()
}

func setupNode() error {
	if err := connect(envVar{&node.helm, "DISTENV_HELM"}, envVar{&node.chart, "DISTENV_CHART"},
		envVar{&node.distenvImage, "DISTENV_NODE_IMAGE_DISTENV"}, envVar{&node.train, "DISTENV_NODE_IMAGE_TRAIN"},
		envVar{&clusterDomain, "DISTENV_NODE_CLUSTER_DOMAIN"}); err != nil {
		return err
	}
	node.kubectl = filepath.Join(env.dir, "bin", "kubectl")
	i := strings.LastIndexByte(node.distenvImage, ':')
	if i < 0 {
		return fmt.Errorf("DISTENV_NODE_IMAGE_DISTENV %q has no tag", node.distenvImage)
	}
	node.repo, node.tag = node.distenvImage[:i], node.distenvImage[i+1:]
	// The product as users install it: the chart, its image, 2 replicas behind a
	// Service, failurePolicy Fail, selfSigned certificates, no clusterDomain (the
	// replicas read their pods' resolv.conf); --wait returns once both replicas
	// are Ready through their probes.
	node.installArgs = []string{"--namespace", chartNS,
		"--set", "image.repository=" + node.repo, "--set", "image.tag=" + node.tag,
		"--set", "image.pullPolicy=Never", "--set", "replicaCount=2",
		"--set", "webhook.failurePolicy=Fail", "--set", "certificates.mode=selfSigned"}
	node.installedAt = time.Now()
	args := append([]string{"install", chartRelease, node.chart, "--create-namespace", "--wait", "--timeout", "4m"},
		node.installArgs...)
	if out, err := helm(context.Background(), args...); err != nil {
		return fmt.Errorf("helm install: %v\n%s", err, out)
	}
	node.readyAt = time.Now()
	fmt.Fprintf(os.Stderr, "e2e-node: helm install --wait: both replicas Ready in %.1f s\n",
		node.readyAt.Sub(node.installedAt).Seconds())
	return nil
}

// helm runs the helm client against the admin kubeconfig; returns its output.
func helm(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node.helm, args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(env.dir, "helm", "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(env.dir, "helm", "config"), "HELM_DATA_HOME="+filepath.Join(env.dir, "helm", "data"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// kubectl runs the control plane's kubectl; returns stdout and stderr apart
// (kubectl prints admission warnings on stderr).
func kubectl(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node.kubectl, args...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// podLogs is `kubectl logs` of one container ("" for the only one).
func podLogs(t *testing.T, ns, pod, container string) string {
	t.Helper()
	args := []string{"-n", ns, "logs", pod}
	if container != "" {
		args = append(args, "-c", container)
	}
	out, stderr, err := kubectl(t, "", args...)
	if err != nil {
		return fmt.Sprintf("(kubectl logs %s/%s %s: %v: %s)", ns, pod, container, err, stderr)
	}
	return out
}

// nodeFigure prints a figure and appends it to $DISTENV_E2E_FIGURES_OUT.
func nodeFigure(t *testing.T, text string) {
	t.Helper()
	fmt.Fprint(os.Stderr, text)
	if out := os.Getenv(nodeFigureFile); out != "" {
		f, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			t.Errorf("%s: %v", out, err)
			return
		}
		defer f.Close()
		fmt.Fprint(f, text)
	}
}
