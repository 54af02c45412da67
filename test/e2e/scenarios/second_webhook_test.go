package scenarios

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	secondWebhookConf  = "zz-e2e-second" // sorts after "distenv": called after it
	secondWebhookName  = "second.e2e.distenv.dev"
	secondWebhookLabel = "e2e.distenv.dev/second-webhook"
	secondWebhookAnn   = "e2e.distenv.dev/touched"
)

// secondWebhook is a minimal mutating webhook that adds an annotation to every
// pod it sees, so that the API server reinvokes the webhooks before it.
type secondWebhook struct {
	mu          sync.Mutex
	calls       int
	withDistenv int
}

func (s *secondWebhook) callsWithDistenvEnv() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.withDistenv
}

func (s *secondWebhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	review, pod, ok := readPodReview(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	s.calls++
	for _, c := range pod.Spec.Containers {
		if _, n := envValue(c, "MASTER_ADDR"); n > 0 {
			s.withDistenv++
			break
		}
	}
	s.mu.Unlock()

	var patch []map[string]any
	key := strings.ReplaceAll(secondWebhookAnn, "/", "~1")
	switch {
	case pod.Annotations == nil:
		patch = append(patch, map[string]any{"op": "add", "path": "/metadata/annotations",
			"value": map[string]string{secondWebhookAnn: "yes"}})
	case pod.Annotations[secondWebhookAnn] != "yes":
		patch = append(patch, map[string]any{"op": "add", "path": "/metadata/annotations/" + key, "value": "yes"})
	}
	pt := admissionv1.PatchTypeJSONPatch
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	if len(patch) > 0 {
		resp.Patch, _ = json.Marshal(patch)
		resp.PatchType = &pt
	}
	out := admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// readPodReview reads a pod's AdmissionReview from r; on a bad body it answers
// 400 itself and returns false.
func readPodReview(w http.ResponseWriter, r *http.Request) (admissionv1.AdmissionReview, corev1.Pod, bool) {
	var review admissionv1.AdmissionReview
	var pod corev1.Pod
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return review, pod, false
	}
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return review, pod, false
	}
	if err := json.Unmarshal(review.Request.Object.Raw, &pod); err != nil {
		http.Error(w, "object is not a pod", http.StatusBadRequest)
		return review, pod, false
	}
	return review, pod, true
}

// startSecondWebhook serves the second webhook over HTTPS on loopback, registers
// it, and waits until the API server calls it. Both are removed when the test ends.
func startSecondWebhook(t *testing.T) *secondWebhook {
	t.Helper()
	sw := &secondWebhook{}
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "second-probe", Labels: map[string]string{secondWebhookLabel: "true"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{container("c")}},
	}
	serveMutatingWebhook(t, secondWebhookConf, secondWebhookName, secondWebhookLabel, sw, probe,
		func(out *corev1.Pod) bool { return out.Annotations[secondWebhookAnn] == "yes" })
	return sw
}

// serveMutatingWebhook serves h over HTTPS on loopback (a self-signed
// certificate), registers it as MutatingWebhookConfiguration conf (webhook
// name, pods with label=true, CREATE, failurePolicy Fail, no reinvocation), and
// waits (bounded) until a dry-run create of probe comes back as called(out)
// says it should. Server and registration are removed when the test ends.
func serveMutatingWebhook(t *testing.T, conf, name, label string, h http.Handler, probe *corev1.Pod,
	called func(out *corev1.Pod) bool) {
	t.Helper()
	caPEM, cert := selfSignedLoopback(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}},
		ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.ServeTLS(l, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })

	url := fmt.Sprintf("https://%s/mutate", l.Addr().String())
	none := admissionregistrationv1.SideEffectClassNone
	never := admissionregistrationv1.NeverReinvocationPolicy
	fail := admissionregistrationv1.Fail
	timeout := int32(10)
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: conf},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:         name,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
					Resources: []string{"pods"}},
			}},
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{label: "true"}},
			SideEffects:             &none,
			ReinvocationPolicy:      &never,
			FailurePolicy:           &fail,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          &timeout,
		}},
	}
	ctx := ctxT(t)
	mwc := env.cs.AdmissionregistrationV1().MutatingWebhookConfigurations()
	_ = mwc.Delete(ctx, conf, metav1.DeleteOptions{})
	if _, err := mwc.Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatalf("register webhook %s: %v", name, err)
	}
	t.Cleanup(func() { _ = mwc.Delete(ctxT(t), conf, metav1.DeleteOptions{}) })

	for i := 0; i < 120; i++ {
		out, err := env.cs.CoreV1().Pods("default").Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil && called(out) {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("the API server does not call webhook %s after 30 s", name)
}

func selfSignedLoopback(t *testing.T) ([]byte, tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "second-webhook"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		t.Fatal(err)
	}
	return certPEM, pair
}
