// Package platform groups what every function uses to run on AWS and to be
// operated: structured logs with redaction (logs), CloudWatch embedded
// metrics (metrics), secrets from Secrets Manager with rotation (secrets)
// and settings read from the environment (envconfig).
//
// These packages know no provider and no business; each states its own
// guarantee in its package doc.
package platform
