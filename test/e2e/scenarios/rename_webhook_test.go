package scenarios

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	renameWebhookConf  = "aa-e2e-rename" // sorts before "distenv": called before it
	renameWebhookName  = "rename.e2e.distenv.dev"
	renameWebhookLabel = "e2e.distenv.dev/rename"
)

// renameWebhook is a mutating webhook of another party that gives every pod it
// sees a hostname of its own ("custom-" + the name the controller gave it), as a
// site's naming policy might: the pod's DNS name is then no longer the one
// distenv derives for its rank.
type renameWebhook struct{}

func (renameWebhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	review, pod, ok := readPodReview(w, r)
	if !ok {
		return
	}
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	if pod.Spec.Hostname != "" && !strings.HasPrefix(pod.Spec.Hostname, "custom-") {
		patch, _ := json.Marshal([]map[string]any{{"op": "replace", "path": "/spec/hostname",
			"value": "custom-" + pod.Spec.Hostname}})
		pt := admissionv1.PatchTypeJSONPatch
		resp.Patch, resp.PatchType = patch, &pt
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp})
}

// startRenameWebhook serves and registers the renaming webhook for pods with
// renameWebhookLabel, and waits until the API server calls it.
func startRenameWebhook(t *testing.T) {
	t.Helper()
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "rename-probe", Labels: map[string]string{renameWebhookLabel: "true"}},
		Spec:       corev1.PodSpec{Hostname: "probe", Containers: []corev1.Container{container("c")}},
	}
	serveMutatingWebhook(t, renameWebhookConf, renameWebhookName, renameWebhookLabel, renameWebhook{},
		probe, func(out *corev1.Pod) bool { return out.Spec.Hostname == "custom-probe" })
}

// A StatefulSet whose pods another webhook renames before distenv sees them:
// distenv would tell rank 1 to meet rank 0 at ren-0.ren..., a name no pod has.
// The StatefulSet controller's create is denied, and the event names both the
// pod's own name and the one distenv derives. No pod is stored.
func TestRenamedPodDenied(t *testing.T) {
	startRenameWebhook(t)
	ns := newNamespace(t, "rename")
	headlessService(t, ns, "ren", map[string]string{"app": "ren"})
	tmpl := podTemplate(with(optIn, renameWebhookLabel, "true"), map[string]string{"distenv.dev/world-size": "2"})
	createSTS(t, ns, statefulSet("ren", "ren", 2, tmpl))

	ev := waitEvent(t, ns, "StatefulSet", "ren", "FailedCreate", "distenv:", podWait)
	t.Logf("StatefulSet event: %s", ev.Message)
	for _, want := range []string{"custom-ren-", "(spec.hostname)", "the host distenv derives for rank", webhookName} {
		if !strings.Contains(ev.Message, want) {
			t.Errorf("the denial does not name %q: %q", want, ev.Message)
		}
	}
	// Both names: the pod's own custom-ren-N and distenv's ren-N, for the same N.
	var n int
	if _, err := fmt.Sscanf(ev.Message[strings.Index(ev.Message, "custom-ren-"):], "custom-ren-%d", &n); err != nil {
		t.Fatalf("no ordinal after custom-ren- in %q: %v", ev.Message, err)
	}
	if want := fmt.Sprintf("is not ren-%d,", n); !strings.Contains(ev.Message, want) {
		t.Errorf("the denial does not name distenv's host %q: %q", want, ev.Message)
	}
	l, err := env.cs.CoreV1().Pods(ns).List(ctxT(t), metav1.ListOptions{LabelSelector: "app=ren"})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 0 {
		t.Errorf("the renamed StatefulSet has %d pods stored, want 0", len(l.Items))
	}
	// Stop the controller from retrying against the webhooks for the rest of the run.
	_ = env.cs.AppsV1().StatefulSets(ns).Delete(ctxT(t), "ren", metav1.DeleteOptions{})
}
