// Package iamcheck checks the AWS requests hookinbox's functions make in
// the local stack against the roles the SAM-translated template gives them,
// as IAM would: every request must be allowed, and every grant used.
//
// A Recorder is an HTTP proxy in front of each local AWS endpoint. Each
// function of a local stack signs with an access key ID of its own
// (AccessKeyID), so the proxy knows which function sent each request
// from the SigV4 credential, as it went on the wire from the handler
// built in process or from the real bootstrap. Request maps each request to
// the IAM actions and resource ARNs it needs; Check evaluates them
// against the roles (wildcards, NotAction, NotResource, explicit Deny, the
// conditions it can evaluate) and reports every refusal and every grant
// no request used that the template does not explain.
//
// The records are files under one directory (Recorder writes one per stack),
// so the test processes of a whole `make test` can be checked together.
// A Recorder is safe for concurrent use.
package iamcheck
