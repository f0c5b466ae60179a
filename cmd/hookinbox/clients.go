package main

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
)

// awsConfig returns an AWS configuration for the running stack: its
// region, the emulators' credentials, and its DynamoDB and SQS endpoints.
func (st *devState) awsConfig() (aws.Config, error) {
	db, sq := st.Endpoints["AWS_ENDPOINT_URL_DYNAMODB"], st.Endpoints["AWS_ENDPOINT_URL_SQS"]
	if db == "" || sq == "" {
		return aws.Config{}, fmt.Errorf("the state file names no DynamoDB or SQS endpoint; restart hookinbox dev")
	}
	return aws.Config{
		Region:        st.Region,
		Credentials:   credentials.NewStaticCredentialsProvider(st.Env["AWS_ACCESS_KEY_ID"], st.Env["AWS_SECRET_ACCESS_KEY"], ""),
		ConfigSources: []any{devstack.ServiceEndpoints{"DynamoDB": db, "SQS": sq}},
	}, nil
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
