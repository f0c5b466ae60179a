package crm_test

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
)

func awsConfig() aws.Config { return aws.Config{Region: "eu-west-1"} }

func contains(s, sub string) bool { return strings.Contains(s, sub) }
