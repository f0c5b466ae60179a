package pipelinetest

import (
	"context"
	"maps"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
)

// StartBootstrap builds the template function logicalID's real bootstrap
// for this host (make build-<logicalID>, as sam build does) and runs it
// under aws-lambda-rie with the environment Build gives it
// (pipeline.Stack.StartBootstrap), then overrides
// (AWS_LAMBDA_FUNCTION_TIMEOUT sets the invocation deadline the RIE
// gives). The function is stopped when the test ends.
func (p *Pipeline) StartBootstrap(t testing.TB, logicalID string, overrides map[string]string) *devstack.Function {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bootstrap, err := devstack.BuildFunction(ctx, logicalID, filepath.Join(t.TempDir(), logicalID))
	if err != nil {
		t.Fatal(err)
	}
	fn, err := p.Stack.StartBootstrap(ctx, logicalID, bootstrap, overrides, p.Logs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fn.Stop() })
	return fn
}

// ProcessWithBootstrap makes Source, and so ProcessUntil, invoke the
// template's real processor bootstrap under aws-lambda-rie
// (StartBootstrap) instead of the handler Build made, with the
// processor's Options.ProcessorEnv and overrides, and returns it.
func (p *Pipeline) ProcessWithBootstrap(t testing.TB, overrides map[string]string) *devstack.Function {
	t.Helper()
	env := maps.Clone(p.processorEnv)
	if env == nil {
		env = map[string]string{}
	}
	maps.Copy(env, overrides)
	fn := p.StartBootstrap(t, "ProcessorFunction", env)
	p.Source.Function = fn
	return fn
}

// SetVisibility sets the events queue's VisibilityTimeout, for tests that
// run the stack with a short timing configuration.
func (p *Pipeline) SetVisibility(t testing.TB, d time.Duration) {
	t.Helper()
	_, err := p.SQS.SetQueueAttributes(context.Background(), &sqs.SetQueueAttributesInput{
		QueueUrl:   aws.String(p.Events.URL()),
		Attributes: map[string]string{string(sqstypes.QueueAttributeNameVisibilityTimeout): strconv.Itoa(int(d / time.Second))},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// QueueEmpty reports whether the events queue holds no message at all:
// none visible, in flight or delayed.
func (p *Pipeline) QueueEmpty(t testing.TB) bool {
	t.Helper()
	d, err := p.Events.Depth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return d.Total() == 0
}
