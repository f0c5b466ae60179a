package devstack

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// ServiceEndpoints maps an AWS SDK service ID ("DynamoDB", "SQS", "SESv2",
// "Secrets Manager") to the endpoint its clients use. Added to an
// aws.Config's ConfigSources it does what AWS_ENDPOINT_URL_<SERVICE> does,
// without touching the process environment, so in-process functions get
// per-service endpoints exactly as a Lambda given those variables would.
type ServiceEndpoints map[string]string

// GetServiceBaseEndpoint implements the SDK's service base endpoint source.
func (s ServiceEndpoints) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	u, ok := s[sdkID]
	return u, ok && u != "", nil
}

// AWSConfigFor returns AWSConfig with DynamoDB and SQS pointed at the
// emulators and every other service in extra at its endpoint (for example
// "SESv2" at a stand-in), for the SDK clients a function builds itself.
func (e *Emulators) AWSConfigFor(extra ServiceEndpoints) aws.Config {
	eps := ServiceEndpoints{"DynamoDB": e.DynamoDBURL, "SQS": e.SQSURL}
	for k, v := range extra {
		eps[k] = v
	}
	cfg := e.AWSConfig()
	cfg.ConfigSources = append(cfg.ConfigSources, eps)
	return cfg
}
