package chaos

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
)

// Proxies a Local stack under faults puts between its functions and what
// they call (see LocalOptions.Proxy). The reference run has none.
const (
	proxyDynamoDB    = "dynamodb"     // every function's DynamoDB
	proxySQSReceiver = "sqs-receiver" // the receiver's SQS: its SendMessage right after the claim
	proxySQS         = "sqs"          // the processor's SQS: DLQ sends, visibility changes
	proxyStripe      = "stripe"       // the business API: Stripe (invoices, subscriptions)
	proxySES         = "ses"          // the business API: SES (welcome emails)
	proxyGoPay       = "gopay"        // the business API: GoPay (the payments the processor fetches)
)

// Toxic is one toxiproxy toxic on one proxy: Type "latency", "timeout",
// "reset_peer", ... with toxiproxy's attributes, on the downstream stream.
type Toxic struct {
	Proxy      string
	Type       string
	Toxicity   float32
	Attributes map[string]any
}

// Fault is a named fault scenario: toxics that are on for On, then off
// for Off, over and over while the chaos run lasts (Off zero: always on).
type Fault struct {
	Name    string
	About   string
	Toxics  []Toxic
	On, Off time.Duration
}

// Faults are the scenarios `hookinbox chaos --fault NAME` runs.
var Faults = []Fault{
	{
		Name:  "dynamodb-latency",
		About: "every DynamoDB call of every function 100-300 ms slower",
		Toxics: []Toxic{{Proxy: proxyDynamoDB, Type: "latency", Toxicity: 1,
			Attributes: map[string]any{"latency": 200, "jitter": 100}}},
	},
	{
		Name:  "dynamodb-timeouts",
		About: "DynamoDB stops answering for 1 s in every 3 s; each stalled connection is closed after 800 ms",
		Toxics: []Toxic{{Proxy: proxyDynamoDB, Type: "timeout", Toxicity: 1,
			Attributes: map[string]any{"timeout": 800}}},
		On: time.Second, Off: 2 * time.Second,
	},
	{
		Name:  "sqs-send-refused",
		About: "the receiver's SendMessage, right after its claim, has its connection reset for 1 s in every 2.5 s",
		Toxics: []Toxic{{Proxy: proxySQSReceiver, Type: "reset_peer", Toxicity: 1,
			Attributes: map[string]any{"timeout": 0}}},
		On: time.Second, Off: 1500 * time.Millisecond,
	},
	{
		Name:  "connection-resets",
		About: "half the connections to DynamoDB and SQS are reset mid-request for 1 s in every 3 s",
		Toxics: []Toxic{
			{Proxy: proxyDynamoDB, Type: "reset_peer", Toxicity: 0.5, Attributes: map[string]any{"timeout": 20}},
			{Proxy: proxySQSReceiver, Type: "reset_peer", Toxicity: 0.5, Attributes: map[string]any{"timeout": 20}},
			{Proxy: proxySQS, Type: "reset_peer", Toxicity: 0.5, Attributes: map[string]any{"timeout": 20}},
		},
		On: time.Second, Off: 2 * time.Second,
	},
	{
		Name:  "slow-business-api",
		About: "every Stripe, SES and GoPay call answers 1-2 s late",
		Toxics: []Toxic{
			{Proxy: proxyStripe, Type: "latency", Toxicity: 1, Attributes: map[string]any{"latency": 1500, "jitter": 500}},
			{Proxy: proxySES, Type: "latency", Toxicity: 1, Attributes: map[string]any{"latency": 1500, "jitter": 500}},
			{Proxy: proxyGoPay, Type: "latency", Toxicity: 1, Attributes: map[string]any{"latency": 1500, "jitter": 500}},
		},
	},
}

// FaultNamed returns the fault called name.
func FaultNamed(name string) (Fault, error) {
	var names []string
	for _, f := range Faults {
		if f.Name == name {
			return f, nil
		}
		names = append(names, f.Name)
	}
	sort.Strings(names)
	return Fault{}, fmt.Errorf("no fault %q; there are %v", name, names)
}

// Injector switches a Fault's toxics on and off on the proxies of a Local
// stack until Stop.
type Injector struct {
	fault   Fault
	proxies map[string]*toxiproxy.Proxy
	stop    context.CancelFunc
	done    sync.WaitGroup
	mu      sync.Mutex
	err     error
	Cycles  int // how many times the toxics were switched on
}

// Inject starts switching f's toxics on proxies (by proxy name).
func Inject(f Fault, proxies map[string]*toxiproxy.Proxy) (*Injector, error) {
	for _, t := range f.Toxics {
		if proxies[t.Proxy] == nil {
			return nil, fmt.Errorf("fault %s: no proxy %q", f.Name, t.Proxy)
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	in := &Injector{fault: f, proxies: proxies, stop: stop}
	if err := in.set(true); err != nil {
		stop()
		return nil, err
	}
	in.Cycles = 1
	if f.Off > 0 {
		in.done.Add(1)
		go in.flap(ctx)
	}
	return in, nil
}

// flap switches the toxics off and on until ctx ends.
func (in *Injector) flap(ctx context.Context) {
	defer in.done.Done()
	on := true
	for {
		wait := in.fault.On
		if !on {
			wait = in.fault.Off
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		on = !on
		if err := in.set(on); err != nil {
			in.mu.Lock()
			if in.err == nil {
				in.err = err
			}
			in.mu.Unlock()
			return
		}
		if on {
			in.mu.Lock()
			in.Cycles++
			in.mu.Unlock()
		}
	}
}

// set adds (on) or removes every toxic of the fault.
func (in *Injector) set(on bool) error {
	for i, t := range in.fault.Toxics {
		name := fmt.Sprintf("%s-%d", in.fault.Name, i)
		p := in.proxies[t.Proxy]
		var err error
		if on {
			_, err = p.AddToxic(name, t.Type, "downstream", t.Toxicity, t.Attributes)
		} else {
			err = p.RemoveToxic(name)
		}
		if err != nil {
			return fmt.Errorf("fault %s: toxic %s on %s: %w", in.fault.Name, t.Type, t.Proxy, err)
		}
	}
	return nil
}

// Stop switches the toxics off for good and reports the first error the
// switching met.
func (in *Injector) Stop() error {
	in.stop()
	in.done.Wait()
	// Off may fail for toxics already off; only an earlier error counts.
	for i, t := range in.fault.Toxics {
		_ = in.proxies[t.Proxy].RemoveToxic(fmt.Sprintf("%s-%d", in.fault.Name, i))
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.err
}
