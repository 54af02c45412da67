package main

import (
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// sample is one line of a Prometheus text exposition.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

var labelRE = regexp.MustCompile(`(\w+)="((?:[^"\\]|\\.)*)"`)

// parseMetrics reads the samples of the named metrics (a prefix match on the
// family name) from a Prometheus text exposition.
func parseMetrics(text string, prefixes ...string) []sample {
	var out []sample
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		keep := false
		for _, p := range prefixes {
			if strings.HasPrefix(line, p) {
				keep = true
				break
			}
		}
		if !keep {
			continue
		}
		s := sample{labels: map[string]string{}}
		var rest string
		if open, closing := strings.IndexByte(line, '{'), strings.LastIndexByte(line, '}'); open >= 0 && closing > open {
			s.name, rest = line[:open], line[closing+1:]
			for _, m := range labelRE.FindAllStringSubmatch(line[open+1:closing], -1) {
				s.labels[m[1]] = m[2]
			}
		} else if f := strings.Fields(line); len(f) >= 2 {
			s.name, rest = f[0], f[1]
		} else {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		s.value = v
		out = append(out, s)
	}
	return out
}

// sum adds the values of the samples named name whose labels pass keep.
func sum(ss []sample, name string, keep func(map[string]string) bool) float64 {
	t := 0.0
	for _, s := range ss {
		if s.name == name && keep(s.labels) {
			t += s.value
		}
	}
	return t
}

// histogram is one Prometheus histogram (the series that passed a filter, summed):
// cumulative bucket counts.
type histogram struct {
	le    []float64
	cum   []float64
	count float64
	sum   float64
}

func histogramOf(ss []sample, metric string, keep func(map[string]string) bool) histogram {
	h := histogram{}
	buckets := map[float64]float64{}
	for _, s := range ss {
		if !keep(s.labels) {
			continue
		}
		switch s.name {
		case metric + "_bucket":
			le, err := strconv.ParseFloat(s.labels["le"], 64)
			if err != nil {
				le = math.Inf(1)
			}
			buckets[le] += s.value
		case metric + "_count":
			h.count += s.value
		case metric + "_sum":
			h.sum += s.value
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

// quantile estimates q as PromQL's histogram_quantile does (linear within a
// bucket); NaN without observations.
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

func (h histogram) mean() float64 {
	if h.count == 0 {
		return math.NaN()
	}
	return h.sum / h.count
}

// buckets prints the non-empty buckets as "le:count" (upper bound in seconds).
func (h histogram) buckets() string {
	var b []string
	prev := 0.0
	for i, le := range h.le {
		if n := h.cum[i] - prev; n > 0 {
			b = append(b, strconv.FormatFloat(le, 'g', -1, 64)+":"+strconv.FormatFloat(n, 'f', 0, 64))
		}
		prev = h.cum[i]
	}
	return strings.Join(b, " ")
}
