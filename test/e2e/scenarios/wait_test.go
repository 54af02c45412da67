package scenarios

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func boolPtr(b bool) *bool    { return &b }
func int64Ptr(i int64) *int64 { return &i }

// distenv.dev/wait-for-master: the stored pods carry distenv's init container
// exactly once although a later webhook makes the API server call distenv
// again, its token path is an empty volume, and the restricted Pod Security
// Standard (enforced on the namespace) accepts the pods.
func TestWaitForMasterInitContainer(t *testing.T) {
	second := startSecondWebhook(t)
	ns := newNamespace(t, "wait")
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted"}}})
	if _, err := env.cs.CoreV1().Namespaces().Patch(ctxT(t), ns, types.MergePatchType, patch,
		metav1.PatchOptions{}); err != nil {
		t.Fatalf("label namespace restricted: %v", err)
	}
	headlessService(t, ns, "ddp", map[string]string{"app": "ddp"})
	trainer := container("trainer")
	trainer.SecurityContext = &corev1.SecurityContext{
		RunAsNonRoot:             boolPtr(true),
		RunAsUser:                int64Ptr(1000),
		AllowPrivilegeEscalation: boolPtr(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	tmpl := podTemplate(with(optIn, secondWebhookLabel, "true"),
		map[string]string{"distenv.dev/wait-for-master": "2m", "distenv.dev/frameworks": "pytorch"}, trainer)
	createSTS(t, ns, statefulSet("ddp", "ddp", 2, tmpl))
	pods := waitPods(t, ns, map[string]string{"app": "ddp"}, 2, podWait)
	for i := range pods {
		p := &pods[i]
		var waits []corev1.Container
		for _, c := range p.Spec.InitContainers {
			if c.Name == "distenv-wait-for-master" {
				waits = append(waits, c)
			}
		}
		if len(waits) != 1 || p.Spec.InitContainers[0].Name != "distenv-wait-for-master" {
			t.Fatalf("pod %s: init containers %v, want distenv-wait-for-master once and first", p.Name,
				p.Spec.InitContainers)
		}
		w := waits[0]
		if got := strings.Join(w.Command, " "); got != "/usr/local/bin/distenv-webhook wait --timeout 120s" {
			t.Errorf("pod %s: wait command %q", p.Name, got)
		}
		wantRank := "0"
		if i > 0 {
			wantRank = "1"
		}
		if v, n := envValue(w, "RANK"); n != 1 || v != wantRank {
			t.Errorf("pod %s: wait RANK=%q (%d), want %q", p.Name, v, n, wantRank)
		}
		if v, _ := envValue(w, "MASTER_ADDR"); v != "ddp-0.ddp."+ns+".svc."+clusterDomain {
			t.Errorf("pod %s: wait MASTER_ADDR=%q", p.Name, v)
		}
		if len(w.VolumeMounts) != 1 || w.VolumeMounts[0].Name != "distenv-no-token" ||
			w.VolumeMounts[0].MountPath != "/var/run/secrets/kubernetes.io/serviceaccount" {
			t.Errorf("pod %s: wait container mounts %+v, want only the empty token path", p.Name, w.VolumeMounts)
		}
		vols := 0
		for _, v := range p.Spec.Volumes {
			if v.Name == "distenv-no-token" {
				vols++
			}
		}
		if vols != 1 {
			t.Errorf("pod %s: %d distenv-no-token volumes, want 1", p.Name, vols)
		}
		if _, n := envValue(p.Spec.Containers[0], "MASTER_ADDR"); n != 1 {
			t.Errorf("pod %s: trainer has MASTER_ADDR %d times", p.Name, n)
		}
	}
	if n := second.callsWithDistenvEnv(); n < 2 {
		t.Errorf("the second webhook saw distenv's variables in %d requests, want ≥ 2 (reinvocation round)", n)
	}
}
