package scenarios

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const admissionMetric = "apiserver_admission_webhook_admission_duration_seconds"

// histogram is one series of a Prometheus histogram: cumulative bucket counts.
type histogram struct {
	le    []float64
	cum   []float64
	count float64
	sum   float64
}

var labelRE = regexp.MustCompile(`(\w+)="((?:[^"\\]|\\.)*)"`)

// parseHistogram sums the series of one Prometheus histogram whose labels pass keep.
func parseHistogram(t *testing.T, text, metric string, keep func(map[string]string) bool) histogram {
	t.Helper()
	h := histogram{}
	buckets := map[float64]float64{}
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, metric) {
			continue
		}
		name, rest, lbl := line, "", map[string]string{}
		if open, closing := strings.IndexByte(line, '{'), strings.LastIndexByte(line, '}'); open >= 0 && closing > open {
			name, rest = line[:open], line[closing+1:]
			for _, m := range labelRE.FindAllStringSubmatch(line[open+1:closing], -1) {
				lbl[m[1]] = m[2]
			}
		} else if f := strings.Fields(line); len(f) == 2 {
			name, rest = f[0], f[1]
		} else {
			continue
		}
		if !keep(lbl) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		switch name {
		case metric + "_bucket":
			le, err := strconv.ParseFloat(lbl["le"], 64)
			if err != nil {
				le = math.Inf(1)
			}
			buckets[le] += v
		case metric + "_count":
			h.count += v
		case metric + "_sum":
			h.sum += v
		}
	}
	for le := range buckets {
		h.le = append(h.le, le)
	}
	sort.Float64s(h.le)
	for _, le := range h.le {
		h.cum = append(h.cum, buckets[le])
	}
	return h
}

// scrapeAPIServer returns the admission-duration histogram the API server keeps
// for distenv's admitted pod CREATEs.
func scrapeAPIServer(t *testing.T) histogram {
	t.Helper()
	return scrapeAPIServerFor(t, webhookName)
}

// scrapeAPIServerFor is scrapeAPIServer for the webhook of another name (the
// chart's, in the node tier).
func scrapeAPIServerFor(t *testing.T, name string) histogram {
	t.Helper()
	raw, err := env.cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctxT(t))
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	return parseHistogram(t, string(raw), admissionMetric, func(l map[string]string) bool {
		return l["name"] == name && l["operation"] == "CREATE" && l["type"] == "admit" && l["rejected"] == "false"
	})
}

// scrapeWebhook returns distenv's own distenv_admission_duration_seconds and
// look-up counters from its /metrics, or ok=false when it has none.
func scrapeWebhook(t *testing.T) (h histogram, lookups map[string]float64, ok bool) {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(env.whDir, "certs", "ca.crt"))
	if err != nil {
		return h, nil, false
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Get(fmt.Sprintf("https://127.0.0.1:%d/metrics", env.whPort))
	if err != nil {
		return h, nil, false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "distenv_admission_duration_seconds") {
		return h, nil, false
	}
	h = parseHistogram(t, string(body), "distenv_admission_duration_seconds", func(map[string]string) bool { return true })
	lookups = map[string]float64{}
	for _, m := range regexp.MustCompile(`(?m)^distenv_lookups_total\{outcome="(\w+)"\} (\S+)$`).FindAllStringSubmatch(string(body), -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		lookups[m[1]] = v
	}
	return h, lookups, true
}

func (h histogram) minus(o histogram) histogram {
	d := histogram{count: h.count - o.count, sum: h.sum - o.sum}
	prev := map[float64]float64{}
	for i, le := range o.le {
		prev[le] = o.cum[i]
	}
	for i, le := range h.le {
		d.le = append(d.le, le)
		d.cum = append(d.cum, h.cum[i]-prev[le])
	}
	return d
}

// quantile estimates q like PromQL's histogram_quantile (linear within a bucket).
func (h histogram) quantile(q float64) float64 {
	if h.count == 0 || len(h.le) == 0 {
		return math.NaN()
	}
	rank := q * h.count
	lower, prevCum := 0.0, 0.0
	for i, le := range h.le {
		if h.cum[i] >= rank {
			if math.IsInf(le, 1) {
				return lower
			}
			if h.cum[i] == prevCum {
				return le
			}
			return lower + (le-lower)*(rank-prevCum)/(h.cum[i]-prevCum)
		}
		lower, prevCum = le, h.cum[i]
	}
	return lower
}

func pct(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(ds)))) - 1
	if i < 0 {
		i = 0
	}
	return ds[i]
}

// TestFigures200IndexedJob creates a 200-completion Indexed Job, checks every
// pod's rank, and prints the distribution of distenv's admission latency as the
// API server measured it. The figures are a benchmark record, not assertions.
func TestFigures200IndexedJob(t *testing.T) {
	if os.Getenv("DISTENV_E2E_FIGURES") == "0" {
		t.Skip("DISTENV_E2E_FIGURES=0")
	}
	const n = 200
	ns := newNamespace(t, "figures")
	headlessService(t, ns, "workers", map[string]string{"job-name": "big"})
	before := scrapeAPIServer(t)
	whBefore, lkBefore, whOK := scrapeWebhook(t)
	tmpl := podTemplate(with(optIn), nil)
	tmpl.Spec.Subdomain = "workers"
	start := time.Now()
	createJob(t, ns, indexedJob("big", n, n, tmpl))
	pods := waitPods(t, ns, map[string]string{"job-name": "big"}, n, 10*time.Minute)
	wall := time.Since(start)
	after := scrapeAPIServer(t)
	whAfter, lkAfter, whOK2 := scrapeWebhook(t)

	hosts := hostnames("big", 0, n)
	seen := map[int]bool{}
	for i := range pods {
		r := jobIndex(t, &pods[i])
		seen[r] = true
		checkInjected(t, &pods[i], expectation{ns: ns, svc: "workers", hosts: hosts, rank: r, port: 29500})
	}
	if len(seen) != n {
		t.Errorf("%d distinct completion indexes, want %d", len(seen), n)
	}

	d := after.minus(before)
	if d.count < n {
		t.Errorf("the API server counted %v distenv admissions for %d pods", d.count, n)
	}
	var creates []time.Duration
	for _, ev := range auditPodCreates(t, ns) {
		if ev.ResponseStatus.Code == 201 {
			creates = append(creates, ev.StageTimestamp.Sub(ev.RequestReceived))
		}
	}
	sort.Slice(creates, func(i, j int) bool { return creates[i] < creates[j] })

	var b strings.Builder
	fmt.Fprintf(&b, "Indexed Job, %d completions, parallelism %d, Kubernetes %s\n", n, n, os.Getenv("DISTENV_E2E_K8S_VERSION"))
	fmt.Fprintf(&b, "job created -> %d pods stored: %.2f s\n", len(pods), wall.Seconds())
	fmt.Fprintf(&b, "%s{name=%q,operation=CREATE,type=admit,rejected=false}:\n", admissionMetric, webhookName)
	fmt.Fprintf(&b, "  count %.0f, sum %.4f s, mean %.2f ms\n", d.count, d.sum, 1000*d.sum/math.Max(d.count, 1))
	writeHistogram(&b, d)
	if whOK && whOK2 {
		w := whAfter.minus(whBefore)
		fmt.Fprintf(&b, "distenv_admission_duration_seconds (the webhook's own /metrics, all its answers in the window):\n")
		fmt.Fprintf(&b, "  count %.0f, sum %.4f s, mean %.3f ms\n", w.count, w.sum, 1000*w.sum/math.Max(w.count, 1))
		writeHistogram(&b, w)
		fmt.Fprintf(&b, "  look-ups: ok %.0f, cached %.0f, error %.0f\n", lkAfter["ok"]-lkBefore["ok"],
			lkAfter["cached"]-lkBefore["cached"], lkAfter["error"]-lkBefore["error"])
	} else {
		fmt.Fprintf(&b, "(the webhook's own /metrics was not available)\n")
	}
	if len(creates) > 0 {
		fmt.Fprintf(&b, "whole pod CREATE in the API server (audit log, %d requests): p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms\n",
			len(creates), ms(pct(creates, 0.5)), ms(pct(creates, 0.9)), ms(pct(creates, 0.99)), ms(creates[len(creates)-1]))
	}
	t.Logf("figures:\n%s", b.String())
	fmt.Printf("\n=== distenv admission figures ===\n%s\n", b.String())
	if out := os.Getenv("DISTENV_E2E_FIGURES_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Errorf("write %s: %v", out, err)
		}
	}
	// Delete the Job now: 200 pending pods are no use to anyone.
	bg := metav1.DeletePropagationBackground
	_ = env.cs.BatchV1().Jobs(ns).Delete(ctxT(t), "big", metav1.DeleteOptions{PropagationPolicy: &bg})
}

func writeHistogram(b *strings.Builder, h histogram) {
	fmt.Fprintf(b, "  estimated p50 %.3f ms, p90 %.3f ms, p99 %.3f ms (linear within buckets)\n",
		1000*h.quantile(0.5), 1000*h.quantile(0.9), 1000*h.quantile(0.99))
	fmt.Fprintf(b, "  buckets (le s: answers):")
	prev := 0.0
	for i, le := range h.le {
		if h.cum[i]-prev > 0 {
			fmt.Fprintf(b, " %s:%.0f", strconv.FormatFloat(le, 'g', -1, 64), h.cum[i]-prev)
		}
		prev = h.cum[i]
	}
	fmt.Fprintf(b, "\n")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
