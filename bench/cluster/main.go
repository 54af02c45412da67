// Command clusterbench measures what a pod webhook costs the creation of a large
// workload on a real control plane (test/e2e/cluster.sh: etcd, kube-apiserver,
// kube-controller-manager, the JobSet manager; no scheduler, so pods stay
// Pending). It runs, interleaved, each workload under each variant:
//
//	none     no pod webhook
//	distenv  distenv-webhook serve, look-ups on
//	peer     bench/cluster/peer, a controller-runtime webhook giving the same env,
//	         HTTP/1.1 as kubebuilder's scaffold serves it
//	peer-h2  the same with HTTP/2 offered (controller-runtime's own default)
//
// and prints per run: seconds from the workload's create to the last pod stored,
// the API server's admission latency of the webhook, distenv's own handler
// histogram, the GETs the API server served on jobs and jobsets, the webhook's
// CPU seconds and peak RSS, errors and denials, and a check of every stored pod
// (rank distinct, WORLD_SIZE and the whole injected environment right).
//
// bench/cluster.sh builds everything, starts the control plane and runs this.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

type options struct {
	pods, jsJobs, jsPods, rounds      int
	variants, workloads               []string
	distenv, peer, out, distenvConfig string
	timeout                           time.Duration
}

func main() {
	var o options
	var variants, workloads string
	flag.IntVar(&o.pods, "pods", 2000, "pods of the Indexed Job")
	flag.IntVar(&o.jsJobs, "jobset-jobs", 8, "Jobs of the JobSet (replicas of its one replicated Job)")
	flag.IntVar(&o.jsPods, "jobset-pods", 250, "pods of each Job of the JobSet")
	flag.IntVar(&o.rounds, "rounds", 1, "interleaved rounds over every workload and variant")
	flag.StringVar(&variants, "variants", "none,distenv,peer", "variants, comma separated")
	flag.StringVar(&workloads, "workloads", "job,jobset", "workloads, comma separated")
	flag.StringVar(&o.distenv, "distenv", "", "distenv-webhook binary")
	flag.StringVar(&o.peer, "peer", "", "peer webhook binary")
	flag.StringVar(&o.distenvConfig, "distenv-config", "", "distenv's config file (default: the defaults, server.drainTimeoutSeconds 3)")
	flag.StringVar(&o.out, "out", "bench/out", "directory for cluster.md and cluster.json")
	flag.DurationVar(&o.timeout, "timeout", 15*time.Minute, "longest wait for one workload's pods")
	flag.Parse()
	o.variants = strings.Split(variants, ",")
	o.workloads = strings.Split(workloads, ",")
	for _, v := range o.variants {
		if _, ok := webhookName[v]; !ok && v != "none" {
			fatalf("unknown variant %q (none, distenv, peer, peer-h2)", v)
		}
	}
	for _, w := range o.workloads {
		if w != "job" && w != "jobset" {
			fatalf("unknown workload %q (job, jobset)", w)
		}
	}
	b, err := newBench(o)
	if err != nil {
		fatalf("%v", err)
	}
	defer b.close()
	var results []*result
	failed := false
	for r := 0; r < o.rounds; r++ {
		for _, w := range o.workloads {
			// Interleaved: each round starts the variants one further along.
			for i := range o.variants {
				v := o.variants[(i+r)%len(o.variants)]
				res, err := b.run(context.Background(), r+1, w, v)
				if err != nil {
					fatalf("round %d, %s, %s: %v", r+1, w, v, err)
				}
				fmt.Print(res.text())
				results = append(results, res)
				if len(res.problems) > 0 {
					failed = true
				}
			}
		}
	}
	summary := summarize(o, results)
	fmt.Print(summary)
	if err := os.MkdirAll(o.out, 0o755); err == nil {
		var all strings.Builder
		for _, r := range results {
			all.WriteString(r.text())
		}
		_ = os.WriteFile(filepath.Join(o.out, "cluster.md"), []byte(summary+"\n```\n"+all.String()+"```\n"), 0o644)
		if js, err := json.MarshalIndent(results, "", " "); err == nil {
			_ = os.WriteFile(filepath.Join(o.out, "cluster.json"), js, 0o644)
		}
		fmt.Printf("clusterbench: wrote %s/cluster.md and cluster.json\n", o.out)
	}
	if failed {
		b.close()
		fatalf("some runs had denials or wrong pods (PROBLEM above)")
	}
}

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "clusterbench: "+format+"\n", a...)
	os.Exit(1)
}

// summarize prints one table row per workload and variant: the median (and
// range) over rounds of the creation time, and the ratio to no webhook.
func summarize(o options, rs []*result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Summary (%d round(s); median over rounds, [min–max])\n\n", o.rounds)
	fmt.Fprintf(&b, "| workload | variant | create → last pod s | vs none | API server webhook p50 / p99 / mean ms | GETs jobs+jobsets | connections | webhook CPU s | peak RSS MiB | API server CPU s | errors / denials |\n")
	fmt.Fprintf(&b, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, w := range o.workloads {
		base := math.NaN()
		var none []float64
		for _, r := range rs {
			if r.Workload == w && r.Variant == "none" {
				none = append(none, r.CreateSeconds)
			}
		}
		if len(none) > 0 {
			base = median(none)
		}
		for _, v := range o.variants {
			var secs []float64
			var last *result
			for _, r := range rs {
				if r.Workload == w && r.Variant == v {
					secs = append(secs, r.CreateSeconds)
					last = r
				}
			}
			if last == nil {
				continue
			}
			sort.Float64s(secs)
			med := median(secs)
			vs := "–"
			if v != "none" && !math.IsNaN(base) {
				vs = fmt.Sprintf("%+.1f %%", 100*(med/base-1))
			}
			lat, gets, cpu, rss, errs, conns := "–", "", "–", "–", "", "–"
			var p50, p99, mean, g, c, m, e, d, cn, api []float64
			for _, r := range rs {
				if r.Workload == w && r.Variant == v {
					p50, p99, mean = append(p50, r.WebhookP50ms), append(p99, r.WebhookP99ms), append(mean, r.WebhookMeanms)
					g, c, m = append(g, r.GetsJobs+r.GetsJobSets), append(c, r.WebhookCPUSeconds), append(m, r.WebhookPeakRSSMiB)
					e, d = append(e, r.Errors), append(d, r.Denials)
					cn, api = append(cn, float64(r.Connections)), append(api, r.APIServerCPU)
				}
			}
			if v != "none" {
				lat = fmt.Sprintf("%s / %s / %s", span(p50, 1), span(p99, 1), span(mean, 2))
				cpu, rss, conns = span(c, 2), span(m, 1), span(cn, 0)
			}
			gets = span(g, 0)
			errs = span(e, 0) + " / " + span(d, 0)
			fmt.Fprintf(&b, "| %s | %s | %.2f [%.2f–%.2f] | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				w, v, med, secs[0], secs[len(secs)-1], vs, lat, gets, conns, cpu, rss, span(api, 2), errs)
		}
	}
	return b.String()
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

// span prints a value, or "min–max" when the rounds differ.
func span(xs []float64, prec int) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	if len(xs) == 0 {
		return "–"
	}
	if lo == hi || fmt.Sprintf("%.*f", prec, lo) == fmt.Sprintf("%.*f", prec, hi) {
		return fmt.Sprintf("%.*f", prec, lo)
	}
	return fmt.Sprintf("%.*f–%.*f", prec, lo, prec, hi)
}
