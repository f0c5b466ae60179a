package cli

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
)

// awsConfig returns an AWS configuration for the running stack, as a
// function of it gets one (devstack.ConfigFromEnv): its region, the emulators'
// credentials, and its endpoints.
func (st *devState) awsConfig() (aws.Config, error) {
	if st.Env["AWS_ENDPOINT_URL_DYNAMODB"] == "" || st.Env["AWS_ENDPOINT_URL_SQS"] == "" {
		return aws.Config{}, fmt.Errorf("the state file names no DynamoDB or SQS endpoint; restart hookinbox dev")
	}
	return devstack.ConfigFromEnv(func(k string) string { return st.Env[k] })
}

// dynamoDB returns a client for the stack's DynamoDB endpoint.
func (st *devState) dynamoDB() (*dynamodb.Client, error) {
	cfg, err := st.awsConfig()
	if err != nil {
		return nil, err
	}
	return dynamodb.NewFromConfig(cfg), nil
}

// table returns the physical name of the table logicalID.
func (st *devState) table(logicalID string) (string, error) {
	name, ok := st.Tables[logicalID]
	if !ok || name == "" {
		return "", fmt.Errorf("the running stack has no %s (is it in template.yaml?)", logicalID)
	}
	return name, nil
}
