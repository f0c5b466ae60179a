package cli

import (
	"net/http"

	"github.com/hookinbox/hookinbox/internal/local/chaos"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/local/sink"
)

// chaosSinks are the destinations of a chaos --destination run: one sink
// for the reference run's stack and one for the chaos run's; nil when
// --destination is off.
type chaosSinks struct {
	ref, run *sink.Sink
	others   []string // the template's destinations, which the sinks take too
}

// newChaosSinks returns the sinks --destination asks for: each verifies
// with the local destination secret and answers 503 to the first
// --destination-fail attempts of each event in the chaos run.
func newChaosSinks(f chaosFlags) (*chaosSinks, error) {
	if !f.destination {
		return nil, nil
	}
	secrets := []string{pipeline.DestinationSecret}
	ref, err := sink.New(sink.Options{Secrets: secrets, Keep: true})
	if err != nil {
		return nil, err
	}
	opts := sink.Options{Secrets: secrets, Keep: true}
	if f.destinationFail > 0 {
		opts.Status, opts.FailFirst = http.StatusServiceUnavailable, f.destinationFail
	}
	run, err := sink.New(opts)
	if err != nil {
		return nil, err
	}
	return &chaosSinks{ref: ref, run: run}, nil
}

// reference and chaos return the sink of each run's stack (nil: none).
func (c *chaosSinks) reference() *sink.Sink {
	if c == nil {
		return nil
	}
	return c.ref
}

func (c *chaosSinks) chaos() *sink.Sink {
	if c == nil {
		return nil
	}
	return c.run
}

// learn reads the names of the destinations of the stack's template,
// whose deliveries the sinks take too.
func (c *chaosSinks) learn(l *chaos.Local) error {
	if c == nil {
		return nil
	}
	cfgs, err := l.Stack.Destinations()
	for _, d := range cfgs {
		c.others = append(c.others, d.Name)
	}
	return err
}

// check compares what each sink received with what its run left, and
// returns a line for the verdict per run, and the differences.
func (c *chaosSinks) check(ref, got chaos.Snapshot) (lines, diffs []string) {
	if c == nil {
		return nil, nil
	}
	for _, r := range []struct {
		name string
		snap chaos.Snapshot
		sink *sink.Sink
	}{{"reference", ref, c.ref}, {"chaos", got, c.run}} {
		report, d := chaos.CheckDestination(r.snap, pipeline.ForwardName, c.others, r.sink.Deliveries())
		lines = append(lines, "destination ("+r.name+" run): "+report.String())
		for _, diff := range d {
			diffs = append(diffs, r.name+" run: "+diff)
		}
	}
	return lines, diffs
}
