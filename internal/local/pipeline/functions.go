package pipeline

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

// Trigger kinds the local stack emulates.
const (
	TriggerHTTP     = "HttpApi"
	TriggerSQS      = "SQS"
	TriggerSchedule = "Schedule"
)

// Trigger is one event source of a function, resolved for a stack.
type Trigger struct {
	Kind string // TriggerHTTP, TriggerSQS or TriggerSchedule
	Name string // the event's name in the template

	// HttpApi
	Method, Path string

	// SQS
	Queue     devstack.Queue
	BatchSize int
	Window    time.Duration

	// Schedule
	Expression string
	Interval   time.Duration
}

// String describes the trigger for logs and the banner.
func (t Trigger) String() string {
	switch t.Kind {
	case TriggerHTTP:
		return t.Method + " " + t.Path
	case TriggerSQS:
		return fmt.Sprintf("SQS %s (batch %d, window %s)", t.Queue.Name, t.BatchSize, t.Window)
	case TriggerSchedule:
		return t.Expression
	}
	return t.Kind + " " + t.Name
}

// Function is one function of the template, as the local stack runs it.
type Function struct {
	LogicalID string
	Env       map[string]string // resolved template environment
	Timeout   int               // seconds
	Memory    int               // MB
	Triggers  []Trigger
	Skipped   []string // events the local stack does not emulate, with the reason
}

// Functions returns every AWS::Serverless::Function of the stack's
// template whose Condition holds, sorted by logical ID.
func (s *Stack) Functions() ([]Function, error) {
	ids, err := s.Included(samtemplate.FunctionType)
	if err != nil {
		return nil, err
	}
	var specs []Function
	for _, id := range ids {
		spec, err := functionOf(s.Stack, id)
		if err != nil {
			return nil, err
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

// Function returns the function logicalID of the stack's template.
func (s *Stack) Function(logicalID string) (Function, error) {
	return functionOf(s.Stack, logicalID)
}

func functionOf(st *devstack.Stack, id string) (Function, error) {
	spec := Function{LogicalID: id, Timeout: 3, Memory: 128}
	env, err := st.FunctionEnv(id)
	if err != nil {
		return spec, err
	}
	spec.Env = env
	props, err := st.Template.Function(id)
	if err != nil {
		return spec, err
	}
	resolved, err := st.Template.Resolve(map[string]any{
		"Timeout":    props["Timeout"],
		"MemorySize": props["MemorySize"],
	}, st.Context())
	if err != nil {
		return spec, fmt.Errorf("function %s: %w", id, err)
	}
	if m, ok := resolved.(map[string]any); ok {
		if n, ok := intValue(m["Timeout"]); ok {
			spec.Timeout = n
		}
		if n, ok := intValue(m["MemorySize"]); ok {
			spec.Memory = n
		}
	}

	evs, _ := props["Events"].(map[string]any)
	names := make([]string, 0, len(evs))
	for name := range evs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		ev, _ := evs[name].(map[string]any)
		typ, _ := ev["Type"].(string)
		raw, err := st.Template.Resolve(ev["Properties"], st.Context())
		if err != nil {
			return spec, fmt.Errorf("function %s: event %s: %w", id, name, err)
		}
		p, _ := raw.(map[string]any)
		if p == nil {
			p = map[string]any{}
		}
		t, skip, err := triggerOf(st, name, typ, p)
		if err != nil {
			return spec, fmt.Errorf("function %s: event %s: %w", id, name, err)
		}
		if skip != "" {
			spec.Skipped = append(spec.Skipped, fmt.Sprintf("%s (%s): %s", name, typ, skip))
			continue
		}
		spec.Triggers = append(spec.Triggers, t)
	}
	return spec, nil
}

// triggerOf turns one resolved event into a trigger. A non-empty skip says
// why the event is not emulated.
func triggerOf(st *devstack.Stack, name, typ string, p map[string]any) (t Trigger, skip string, err error) {
	t = Trigger{Kind: typ, Name: name}
	switch typ {
	case TriggerHTTP:
		t.Method, _ = p["Method"].(string)
		t.Path, _ = p["Path"].(string)
		t.Method = strings.ToUpper(t.Method)
		if t.Method == "" {
			t.Method = "ANY"
		}
		if t.Path == "" {
			// No Path and Method is the API's $default route.
			t.Path = "/{proxy+}"
		}
		return t, "", nil

	case TriggerSQS:
		if enabled, ok := p["Enabled"].(bool); ok && !enabled {
			return t, "Enabled is false", nil
		}
		arn, _ := p["Queue"].(string)
		for _, q := range st.Queues {
			if q.ARN == arn || q.URL == arn {
				t.Queue = q
			}
		}
		if t.Queue.URL == "" {
			return t, "", fmt.Errorf("queue %q is not one of the stack's queues", arn)
		}
		t.BatchSize = 10
		if n, ok := intValue(p["BatchSize"]); ok && n > 0 {
			t.BatchSize = n
		}
		if n, ok := intValue(p["MaximumBatchingWindowInSeconds"]); ok && n > 0 {
			t.Window = time.Duration(n) * time.Second
		}
		return t, "", nil

	case TriggerSchedule, "ScheduleV2":
		t.Kind = TriggerSchedule
		expr, _ := p["Schedule"].(string)
		if typ == "ScheduleV2" {
			expr, _ = p["ScheduleExpression"].(string)
		}
		if enabled, ok := p["Enabled"].(bool); ok && !enabled {
			return t, "Enabled is false", nil
		}
		if state, _ := p["State"].(string); strings.EqualFold(state, "DISABLED") {
			return t, "State is DISABLED", nil
		}
		t.Expression = expr
		d, err := parseRate(expr)
		if err != nil {
			return t, err.Error(), nil
		}
		t.Interval = d
		return t, "", nil
	}
	return t, "event type not emulated by hookinbox dev", nil
}

// parseRate parses an EventBridge rate expression, "rate(5 minutes)".
// cron(...) expressions are not emulated.
func parseRate(expr string) (time.Duration, error) {
	e := strings.TrimSpace(expr)
	if strings.HasPrefix(e, "cron(") {
		return 0, fmt.Errorf("%s: cron expressions are not emulated; invoke the function by hand", expr)
	}
	if !strings.HasPrefix(e, "rate(") || !strings.HasSuffix(e, ")") {
		return 0, fmt.Errorf("%q is not a rate(N unit) expression", expr)
	}
	fields := strings.Fields(e[len("rate(") : len(e)-1])
	if len(fields) != 2 {
		return 0, fmt.Errorf("%q is not a rate(N unit) expression", expr)
	}
	n, err := strconv.Atoi(fields[0])
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q: rate value must be a positive integer", expr)
	}
	units := map[string]time.Duration{
		"minute": time.Minute, "minutes": time.Minute,
		"hour": time.Hour, "hours": time.Hour,
		"day": 24 * time.Hour, "days": 24 * time.Hour,
	}
	unit, ok := units[fields[1]]
	if !ok {
		return 0, fmt.Errorf("%q: unit must be minute(s), hour(s) or day(s)", expr)
	}
	// EventBridge wants the singular for 1 and the plural otherwise.
	if (n == 1) != !strings.HasSuffix(fields[1], "s") {
		return 0, fmt.Errorf("%q: use the singular unit for 1 and the plural otherwise", expr)
	}
	return time.Duration(n) * unit, nil
}

// intValue reads an integer a template may write as a number or a string.
func intValue(v any) (int, bool) {
	s, err := samtemplate.ScalarString(v)
	n, err2 := strconv.Atoi(strings.TrimSpace(s))
	return n, err == nil && err2 == nil
}
