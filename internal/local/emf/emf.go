// Package emf reads CloudWatch embedded-metric-format lines back, as
// CloudWatch would publish them: what internal/platform/metrics writes.
// The CLI's status command, the benchmarks and the tests use it; nothing
// that ships does.
package emf

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hookinbox/hookinbox/internal/platform/metrics"
)

// Line is one EMF line read back: what CloudWatch would publish from it.
type Line struct {
	Namespace  string
	Time       time.Time
	Dimensions [][]string              // the dimension sets, [] first
	Units      map[string]metrics.Unit // metric name → unit
	Values     map[string]float64      // metric name → value
	Dims       map[string]string       // dimension name → value
}

// ErrNotEMF: the line is JSON but carries no "_aws" metadata.
var ErrNotEMF = errors.New("not an embedded-metric-format line")

// Parse reads one line as CloudWatch does: the "_aws" directive names the
// metrics and dimension sets; each must be a member of the line, metrics
// numbers and dimensions strings. A JSON line without "_aws" is ErrNotEMF.
func Parse(line []byte) (Line, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return Line{}, fmt.Errorf("emf: %w", err)
	}
	meta, ok := raw["_aws"]
	if !ok {
		return Line{}, ErrNotEMF
	}
	var aws struct {
		Timestamp         *int64
		CloudWatchMetrics []struct {
			Namespace  string
			Dimensions [][]string
			Metrics    []struct {
				Name string
				Unit string
			}
		}
	}
	if err := json.Unmarshal(meta, &aws); err != nil {
		return Line{}, fmt.Errorf("emf: _aws: %w", err)
	}
	if aws.Timestamp == nil || len(aws.CloudWatchMetrics) != 1 {
		return Line{}, fmt.Errorf("emf: _aws wants a Timestamp and one CloudWatchMetrics directive, got %s", meta)
	}
	d := aws.CloudWatchMetrics[0]
	l := Line{
		Namespace: d.Namespace, Time: time.UnixMilli(*aws.Timestamp), Dimensions: d.Dimensions,
		Units: map[string]metrics.Unit{}, Values: map[string]float64{}, Dims: map[string]string{},
	}
	if l.Namespace == "" {
		return Line{}, errors.New("emf: no Namespace")
	}
	for _, m := range d.Metrics {
		var v float64
		if err := json.Unmarshal(raw[m.Name], &v); err != nil {
			return Line{}, fmt.Errorf("emf: metric %s is not a number member: %w", m.Name, err)
		}
		l.Units[m.Name], l.Values[m.Name] = metrics.Unit(m.Unit), v
	}
	for _, set := range d.Dimensions {
		for _, name := range set {
			var v string
			if err := json.Unmarshal(raw[name], &v); err != nil || v == "" {
				return Line{}, fmt.Errorf("emf: dimension %s is not a non-empty string member", name)
			}
			l.Dims[name] = v
		}
	}
	return l, nil
}

// ReadLines parses every line of r (a METRICS_FILE, or a log where EMF
// lines are mixed with others: JSON lines without "_aws" and lines that
// are not JSON objects are skipped). A malformed EMF line is an error.
func ReadLines(r io.Reader) ([]Line, error) {
	var lines []Line
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 || b[0] != '{' || !bytes.Contains(b, []byte(`"_aws"`)) {
			continue
		}
		l, err := Parse(b)
		if errors.Is(err, ErrNotEMF) {
			continue
		}
		if err != nil {
			return lines, err
		}
		lines = append(lines, l)
	}
	return lines, sc.Err()
}

// Sum adds up the metric name over lines whose dimensions include want
// (every dimension name in want with that value) and whose time is not
// before since.
func Sum(lines []Line, name string, want map[string]string, since time.Time) float64 {
	var total float64
next:
	for _, l := range lines {
		v, ok := l.Values[name]
		if !ok || l.Time.Before(since) {
			continue
		}
		for k, w := range want {
			if l.Dims[k] != w {
				continue next
			}
		}
		total += v
	}
	return total
}
